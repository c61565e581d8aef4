package cmd

import (
	"context"
	"testing"

	"github.com/outboxctl/outboxctl/internal/doctor"
	"github.com/outboxctl/outboxctl/internal/render"
)

// TestDoctorExitStatus drives runDoctor's printing half with findings of each severity and
// checks the exit status Main would return: 0, 4 (ExitWarn) or 5 (ExitCritical).
func TestDoctorExitStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		worst doctor.Severity
		want  int
		err   string
	}{
		{doctor.OK, ExitOK, ""},
		{doctor.Warn, ExitWarn, "doctor: 0 critical, 1 warning(s), 1 ok"},
		{doctor.Crit, ExitCritical, "doctor: 1 critical, 0 warning(s), 1 ok"},
	} {
		io, out, _ := render.Test()
		fs := []doctor.Finding{{Check: "replica", Severity: doctor.OK, Summary: "primary"}}
		if tt.worst != doctor.OK {
			fs = append(fs, doctor.Finding{Check: "xmin", Severity: tt.worst, Summary: "pid 1"})
		}
		doc, err := findingsDoc(factory{}, fs)
		if perr := render.NewPrinter(io, render.FormatJSON, true).Print(doc); perr != nil {
			t.Fatal(perr)
		}
		if got := exitCode(context.Background(), err); got != tt.want {
			t.Fatalf("%v: exit %d, want %d", tt.worst, got, tt.want)
		}
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Fatalf("%v: error %v, want %q", tt.worst, err, tt.err)
		}
		if out.Len() == 0 {
			t.Fatalf("%v: findings not returned with the exit status", tt.worst)
		}
	}
	if ExitWarn == ExitError || ExitWarn == ExitUsage || ExitCritical == ExitError || ExitCritical == ExitUsage || ExitWarn == ExitCritical {
		t.Fatal("doctor's exit codes must be distinct from 1 (runtime failure) and 2 (usage)")
	}
}
