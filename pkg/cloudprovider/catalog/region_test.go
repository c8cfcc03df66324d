package catalog

import "testing"

func TestRegionCode(t *testing.T) {
	// The codes AWS zone IDs use (use1-az1, apne1-az4, ...).
	for _, tc := range []struct{ region, want string }{
		{"us-east-1", "use1"},
		{"us-east-2", "use2"},
		{"us-west-2", "usw2"},
		{"eu-west-1", "euw1"},
		{"eu-central-1", "euc1"},
		{"eu-north-1", "eun1"},
		{"ap-northeast-1", "apne1"},
		{"ap-southeast-2", "apse2"},
		{"ap-south-1", "aps1"},
		{"ca-central-1", "cac1"},
		{"sa-east-1", "sae1"},
		{"us-gov-west-1", "usgw1"},
		// Not region-shaped: kept as it is rather than guessed at.
		{"local", "local"},
		{"moon-1", "moon-1"},
	} {
		if got := RegionCode(tc.region); got != tc.want {
			t.Errorf("RegionCode(%q) = %q, want %q", tc.region, got, tc.want)
		}
	}
}

func TestEveryRegionHasADistinctCode(t *testing.T) {
	seen := map[string]string{}
	for _, r := range Regions() {
		code := RegionCode(r)
		if other, dup := seen[code]; dup {
			t.Errorf("regions %s and %s share the code %s", other, r, code)
		}
		seen[code] = r
	}
}
