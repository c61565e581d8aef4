// Package enums holds Sentry's OutboxCategory and OutboxScope integers, their names, the
// scope each category is registered to, and the rules for turning what an operator types
// into those integers. The built-in registry mirrors the reference (categories 0–48,
// scopes 0–12); a newer or older Sentry checkout can be loaded with LoadFile.
package enums

// Source is an enum registry as it is written down: the members of OutboxCategory and the
// scope_categories(...) registrations of OutboxScope, in file order. It can hold mistakes
// (a category in two scopes, a reused integer); Lint reports them and Build refuses them.
type Source struct {
	// Origin says where the registry came from ("built-in" or a file path).
	Origin     string
	Categories []CategoryDef
	Scopes     []ScopeDef
}

// CategoryDef is one OutboxCategory member.
type CategoryDef struct {
	Name    string
	Value   int
	Retired bool // marked "no longer in use" in Sentry
	Line    int  // 1-based line in the file; 0 for the built-in registry
}

// ScopeDef is one OutboxScope member and the categories registered to it.
type ScopeDef struct {
	Name       string
	Value      int
	Retired    bool
	Categories []string // category names, as written in scope_categories(...)
	Line       int
}

// builtinSource is the registry from the reference (sentry-outboxes.md §2, newest fully-read
// version, commit 05b2b37b, ~May 2026). SEER_SCOPE and GROUP_SCOPE (and category 49) exist in
// later Sentry versions but their integers are unverified, so they are not built in: rows
// carrying them show as UNKNOWN(n), and --enums loads a checkout that has them.
var builtinSource = Source{ //nolint:gochecknoglobals // immutable table
	Origin: "built-in (Sentry category.py, commit 05b2b37b, ~May 2026)",
	Categories: []CategoryDef{
		{Name: "USER_UPDATE", Value: 0},
		{Name: "WEBHOOK_PROXY", Value: 1, Retired: true},
		{Name: "ORGANIZATION_UPDATE", Value: 2},
		{Name: "ORGANIZATION_MEMBER_UPDATE", Value: 3},
		{Name: "UNUSED_TWO", Value: 4},
		{Name: "AUDIT_LOG_EVENT", Value: 5},
		{Name: "USER_IP_EVENT", Value: 6},
		{Name: "INTEGRATION_UPDATE", Value: 7},
		{Name: "PROJECT_UPDATE", Value: 8},
		{Name: "API_APPLICATION_UPDATE", Value: 9},
		{Name: "SENTRY_APP_INSTALLATION_UPDATE", Value: 10},
		{Name: "TEAM_UPDATE", Value: 11},
		{Name: "ORGANIZATION_INTEGRATION_UPDATE", Value: 12},
		{Name: "UNUSUED_THREE", Value: 13}, // sic: Sentry's spelling
		{Name: "SEND_SIGNAL", Value: 14},
		{Name: "ORGANIZATION_MAPPING_CUSTOMER_ID_UPDATE", Value: 15},
		{Name: "ORGAUTHTOKEN_UPDATE_USED", Value: 16},
		{Name: "PROVISION_ORGANIZATION", Value: 17},
		{Name: "POST_ORGANIZATION_PROVISION", Value: 18},
		{Name: "UNUSED_ONE", Value: 19},
		{Name: "DISABLE_AUTH_PROVIDER", Value: 20, Retired: true},
		{Name: "RESET_IDP_FLAGS", Value: 21},
		{Name: "MARK_INVALID_SSO", Value: 22},
		{Name: "SUBSCRIPTION_UPDATE", Value: 23},
		{Name: "AUTH_PROVIDER_UPDATE", Value: 24},
		{Name: "AUTH_IDENTITY_UPDATE", Value: 25},
		{Name: "ORGANIZATION_MEMBER_TEAM_UPDATE", Value: 26},
		{Name: "ORGANIZATION_SLUG_RESERVATION_UPDATE", Value: 27},
		{Name: "API_KEY_UPDATE", Value: 28},
		{Name: "PARTNER_ACCOUNT_UPDATE", Value: 29},
		{Name: "SENTRY_APP_UPDATE", Value: 30},
		{Name: "UNUSED_FOUR", Value: 31},
		{Name: "API_TOKEN_UPDATE", Value: 32},
		{Name: "ORG_AUTH_TOKEN_UPDATE", Value: 33},
		{Name: "ISSUE_COMMENT_UPDATE", Value: 34},
		{Name: "EXTERNAL_ACTOR_UPDATE", Value: 35},
		{Name: "RELOCATION_EXPORT_REQUEST", Value: 36, Retired: true},
		{Name: "RELOCATION_EXPORT_REPLY", Value: 37, Retired: true},
		{Name: "SEND_VERCEL_INVOICE", Value: 38},
		{Name: "FTC_CONSENT", Value: 39},
		{Name: "SERVICE_HOOK_UPDATE", Value: 40},
		{Name: "SENTRY_APP_DELETE", Value: 41},
		{Name: "SENTRY_APP_INSTALLATION_DELETE", Value: 42},
		{Name: "IDENTITY_UPDATE", Value: 43},
		{Name: "SENTRY_APP_NORMALIZE_ACTIONS", Value: 44},
		{Name: "PROJECT_KEY_UPDATE", Value: 45},
		{Name: "SCM_INTEGRATION_CONFIG_BACKFILL", Value: 46},
		{Name: "ORGANIZATION_AVATAR_UPDATE", Value: 47},
		{Name: "SEER_RUN_CREATE", Value: 48},
	},
	Scopes: []ScopeDef{
		{Name: "ORGANIZATION_SCOPE", Value: 0, Categories: []string{
			"ORGANIZATION_MEMBER_UPDATE", "MARK_INVALID_SSO", "RESET_IDP_FLAGS", "ORGANIZATION_UPDATE",
			"PROJECT_UPDATE", "ORGANIZATION_INTEGRATION_UPDATE", "SEND_SIGNAL", "ORGAUTHTOKEN_UPDATE_USED",
			"POST_ORGANIZATION_PROVISION", "DISABLE_AUTH_PROVIDER", "ORGANIZATION_MAPPING_CUSTOMER_ID_UPDATE",
			"TEAM_UPDATE", "AUTH_PROVIDER_UPDATE", "ORGANIZATION_MEMBER_TEAM_UPDATE", "API_KEY_UPDATE",
			"ORGANIZATION_SLUG_RESERVATION_UPDATE", "ORG_AUTH_TOKEN_UPDATE", "PARTNER_ACCOUNT_UPDATE",
			"UNUSED_FOUR", "ISSUE_COMMENT_UPDATE", "SEND_VERCEL_INVOICE", "FTC_CONSENT", "PROJECT_KEY_UPDATE",
			"SCM_INTEGRATION_CONFIG_BACKFILL", "ORGANIZATION_AVATAR_UPDATE", "SEER_RUN_CREATE",
		}},
		{Name: "USER_SCOPE", Value: 1, Categories: []string{
			"USER_UPDATE", "UNUSED_ONE", "UNUSED_TWO", "UNUSUED_THREE", "AUTH_IDENTITY_UPDATE", "IDENTITY_UPDATE",
		}},
		{Name: "WEBHOOK_SCOPE", Value: 2, Retired: true, Categories: []string{"WEBHOOK_PROXY"}},
		{Name: "AUDIT_LOG_SCOPE", Value: 3, Categories: []string{"AUDIT_LOG_EVENT"}},
		{Name: "USER_IP_SCOPE", Value: 4, Categories: []string{"USER_IP_EVENT"}},
		{Name: "INTEGRATION_SCOPE", Value: 5, Categories: []string{"INTEGRATION_UPDATE", "EXTERNAL_ACTOR_UPDATE"}},
		{Name: "APP_SCOPE", Value: 6, Categories: []string{
			"API_APPLICATION_UPDATE", "SENTRY_APP_INSTALLATION_UPDATE", "SENTRY_APP_UPDATE",
			"SERVICE_HOOK_UPDATE", "SENTRY_APP_DELETE", "SENTRY_APP_INSTALLATION_DELETE",
		}},
		{Name: "TEAM_SCOPE", Value: 7, Retired: true},
		{Name: "PROVISION_SCOPE", Value: 8, Categories: []string{"PROVISION_ORGANIZATION"}},
		{Name: "SUBSCRIPTION_SCOPE", Value: 9, Categories: []string{"SUBSCRIPTION_UPDATE"}},
		{Name: "RELOCATION_SCOPE", Value: 10, Retired: true, Categories: []string{
			"RELOCATION_EXPORT_REQUEST", "RELOCATION_EXPORT_REPLY",
		}},
		{Name: "API_TOKEN_SCOPE", Value: 11, Categories: []string{"API_TOKEN_UPDATE"}},
		{Name: "ACTION_SCOPE", Value: 12, Categories: []string{"SENTRY_APP_NORMALIZE_ACTIONS"}},
	},
}

// scopeTags is OutboxScope.get_tag_name: the name Sentry gives a scope's shard identifier.
// Every scope not listed uses "shard_identifier".
var scopeTags = map[string]string{ //nolint:gochecknoglobals // immutable table
	"ORGANIZATION_SCOPE": "organization_id",
	"USER_SCOPE":         "user_id",
	"APP_SCOPE":          "app_id",
	"API_TOKEN_SCOPE":    "api_token_id",
}

// killswitchOptions are the options should_skip_shard() reads. Only these two scopes can be
// disabled; the same lists apply to the cell and the control tables.
var killswitchOptions = map[string]string{ //nolint:gochecknoglobals // immutable table
	"ORGANIZATION_SCOPE": "hybrid_cloud.authentication.disabled_organization_shards",
	"USER_SCOPE":         "hybrid_cloud.authentication.disabled_user_shards",
}

// objectIsShard lists the categories whose object identifier is the shard identifier, with
// the scope in which that holds: the outbox is written for the model that is the shard itself
// (infer_identifiers: an Organization in ORGANIZATION_SCOPE, a User in USER_SCOPE, ...) or the
// producer passes the same id for both (PROVISION_ORGANIZATION). The scope matters: in 2024
// API_TOKEN_UPDATE lived in USER_SCOPE, where the shard is the user, not the token. For these,
// a lookup by object can use the shard index instead of scanning the whole scope.
var objectIsShard = map[string]string{ //nolint:gochecknoglobals // immutable table
	"ORGANIZATION_UPDATE":    "ORGANIZATION_SCOPE",
	"USER_UPDATE":            "USER_SCOPE",
	"INTEGRATION_UPDATE":     "INTEGRATION_SCOPE",
	"API_APPLICATION_UPDATE": "APP_SCOPE",
	"API_TOKEN_UPDATE":       "API_TOKEN_SCOPE",
	"PROVISION_ORGANIZATION": "PROVISION_SCOPE",
}
