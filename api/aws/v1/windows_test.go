package v1_test

import (
	"testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// The Windows builds are the releases' OS build numbers, as the
// reference's pkg/apis/v1/labels.go (v1.14.1) and Microsoft's Windows
// Server release information give them: 2019 is 17763, 2022 20348, 2025
// 26100.
func TestWindowsBuilds(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{awsv1.Windows2019Build, "10.0.17763"},
		{awsv1.Windows2022Build, "10.0.20348"},
		{awsv1.Windows2025Build, "10.0.26100"},
	} {
		if tc.got != tc.want {
			t.Errorf("build %s, want %s", tc.got, tc.want)
		}
	}
}
