"""A test copy of the shape of Sentry's src/sentry/hybridcloud/outbox/category.py.

Written for outboxctl's tests: same constructs (IntEnum members with retirement comments,
blank lines inside the enum, methods after the members, scope_categories() registrations on
one or several lines, an empty set(), a retired scope marked by a comment above it).
"""

from __future__ import annotations

from enum import IntEnum

_outbox_categories_for_scope: dict[int, set[OutboxCategory]] = {}
_used_categories: set[OutboxCategory] = set()


class OutboxCategory(IntEnum):
    USER_UPDATE = 0
    WEBHOOK_PROXY = 1  # no longer in use
    ORGANIZATION_UPDATE = 2
    ORGANIZATION_MEMBER_UPDATE = 3
    UNUSED_TWO = 4
    AUDIT_LOG_EVENT = 5
    USER_IP_EVENT = 6
    INTEGRATION_UPDATE = 7
    PROJECT_UPDATE = 8
    API_APPLICATION_UPDATE = 9
    SENTRY_APP_INSTALLATION_UPDATE = 10
    TEAM_UPDATE = 11
    ORGANIZATION_INTEGRATION_UPDATE = 12
    UNUSUED_THREE = 13
    SEND_SIGNAL = 14
    ORGANIZATION_MAPPING_CUSTOMER_ID_UPDATE = 15
    ORGAUTHTOKEN_UPDATE_USED = 16
    PROVISION_ORGANIZATION = 17
    POST_ORGANIZATION_PROVISION = 18
    UNUSED_ONE = 19
    DISABLE_AUTH_PROVIDER = 20  # no longer in use
    RESET_IDP_FLAGS = 21
    MARK_INVALID_SSO = 22
    SUBSCRIPTION_UPDATE = 23

    AUTH_PROVIDER_UPDATE = 24
    AUTH_IDENTITY_UPDATE = 25
    ORGANIZATION_MEMBER_TEAM_UPDATE = 26
    ORGANIZATION_SLUG_RESERVATION_UPDATE = 27
    API_KEY_UPDATE = 28
    PARTNER_ACCOUNT_UPDATE = 29
    SENTRY_APP_UPDATE = 30
    UNUSED_FOUR = 31
    API_TOKEN_UPDATE = 32
    ORG_AUTH_TOKEN_UPDATE = 33
    ISSUE_COMMENT_UPDATE = 34
    EXTERNAL_ACTOR_UPDATE = 35

    RELOCATION_EXPORT_REQUEST = 36  # no longer in use
    RELOCATION_EXPORT_REPLY = 37  # no longer in use

    SEND_VERCEL_INVOICE = 38
    FTC_CONSENT = 39

    SERVICE_HOOK_UPDATE = 40
    SENTRY_APP_DELETE = 41
    SENTRY_APP_INSTALLATION_DELETE = 42
    IDENTITY_UPDATE = 43
    SENTRY_APP_NORMALIZE_ACTIONS = 44
    PROJECT_KEY_UPDATE = 45
    SCM_INTEGRATION_CONFIG_BACKFILL = 46
    ORGANIZATION_AVATAR_UPDATE = 47
    SEER_RUN_CREATE = 48
    GROUP_ACTION_LOG_EVENT = 48
    NEW_THING = 50

    @classmethod
    def as_choices(cls):
        return [(i.value, i.value) for i in cls]

    def get_scope(self) -> OutboxScope:
        for scope_int, categories in _outbox_categories_for_scope.items():
            if self in categories:
                return OutboxScope(scope_int)
        raise KeyError(self)


def scope_categories(enum_value: int, categories: set[OutboxCategory]) -> int:
    _outbox_categories_for_scope[enum_value] = categories
    inter = _used_categories.intersection(categories)
    assert not inter, f"OutboxCategories {inter} were already registered to a different scope"
    _used_categories.update(categories)
    return enum_value


class OutboxScope(IntEnum):
    ORGANIZATION_SCOPE = scope_categories(
        0,
        {
            OutboxCategory.ORGANIZATION_MEMBER_UPDATE,
            OutboxCategory.MARK_INVALID_SSO,
            OutboxCategory.RESET_IDP_FLAGS,
            OutboxCategory.ORGANIZATION_UPDATE,
            OutboxCategory.PROJECT_UPDATE,
            OutboxCategory.ORGANIZATION_INTEGRATION_UPDATE,
            OutboxCategory.SEND_SIGNAL,
            OutboxCategory.ORGAUTHTOKEN_UPDATE_USED,
            OutboxCategory.POST_ORGANIZATION_PROVISION,
            OutboxCategory.DISABLE_AUTH_PROVIDER,
            OutboxCategory.ORGANIZATION_MAPPING_CUSTOMER_ID_UPDATE,
            OutboxCategory.TEAM_UPDATE,
            OutboxCategory.AUTH_PROVIDER_UPDATE,
            OutboxCategory.ORGANIZATION_MEMBER_TEAM_UPDATE,
            OutboxCategory.API_KEY_UPDATE,
            OutboxCategory.ORGANIZATION_SLUG_RESERVATION_UPDATE,
            OutboxCategory.ORG_AUTH_TOKEN_UPDATE,
            OutboxCategory.PARTNER_ACCOUNT_UPDATE,
            OutboxCategory.UNUSED_FOUR,
            OutboxCategory.ISSUE_COMMENT_UPDATE,
            OutboxCategory.SEND_VERCEL_INVOICE,
            OutboxCategory.FTC_CONSENT,
            OutboxCategory.PROJECT_KEY_UPDATE,
            OutboxCategory.SCM_INTEGRATION_CONFIG_BACKFILL,
            OutboxCategory.ORGANIZATION_AVATAR_UPDATE,
            OutboxCategory.SEER_RUN_CREATE,
        },
    )
    USER_SCOPE = scope_categories(
        1,
        {
            OutboxCategory.USER_UPDATE,
            OutboxCategory.PROJECT_UPDATE,
            OutboxCategory.UNUSED_ONE,
            OutboxCategory.UNUSED_TWO,
            OutboxCategory.UNUSUED_THREE,
            OutboxCategory.AUTH_IDENTITY_UPDATE,
            OutboxCategory.IDENTITY_UPDATE,
        },
    )
    # Webhook scope is no longer in use
    WEBHOOK_SCOPE = scope_categories(2, {OutboxCategory.WEBHOOK_PROXY})
    AUDIT_LOG_SCOPE = scope_categories(3, {OutboxCategory.AUDIT_LOG_EVENT})
    USER_IP_SCOPE = scope_categories(4, {OutboxCategory.USER_IP_EVENT})
    INTEGRATION_SCOPE = scope_categories(
        5,
        {
            OutboxCategory.INTEGRATION_UPDATE,
            OutboxCategory.EXTERNAL_ACTOR_UPDATE,
        },
    )
    APP_SCOPE = scope_categories(
        6,
        {
            OutboxCategory.API_APPLICATION_UPDATE,
            OutboxCategory.SENTRY_APP_INSTALLATION_UPDATE,
            OutboxCategory.SENTRY_APP_UPDATE,
            OutboxCategory.SERVICE_HOOK_UPDATE,
            OutboxCategory.SENTRY_APP_DELETE,
            OutboxCategory.SENTRY_APP_INSTALLATION_DELETE,
        },
    )
    # Team scope is no longer in use
    TEAM_SCOPE = scope_categories(7, set())
    PROVISION_SCOPE = scope_categories(8, {OutboxCategory.PROVISION_ORGANIZATION})
    SUBSCRIPTION_SCOPE = scope_categories(9, {OutboxCategory.SUBSCRIPTION_UPDATE})
    # Relocation scope is no longer in use
    RELOCATION_SCOPE = scope_categories(
        10,
        {
            OutboxCategory.RELOCATION_EXPORT_REQUEST,
            OutboxCategory.RELOCATION_EXPORT_REPLY,
        },
    )
    API_TOKEN_SCOPE = scope_categories(11, {OutboxCategory.API_TOKEN_UPDATE})
    GROUP_SCOPE = scope_categories(14, {OutboxCategory.GROUP_ACTION_LOG_EVENT})
    ACTION_SCOPE = scope_categories(12, {OutboxCategory.SENTRY_APP_NORMALIZE_ACTIONS})

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def get_tag_name(scope: OutboxScope) -> str:
        if scope == OutboxScope.ORGANIZATION_SCOPE:
            return "organization_id"
        return "shard_identifier"


_missing_categories = set(OutboxCategory) - _used_categories
assert not _missing_categories, f"OutboxCategories {_missing_categories} not registered to an OutboxScope"


class WebhookProviderIdentifier(IntEnum):
    SLACK = 0
    GITHUB = 1
