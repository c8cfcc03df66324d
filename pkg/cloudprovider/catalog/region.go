package catalog

import "strings"

// RegionCode is the short form of a region that AWS zone IDs begin with:
// the geography, each direction word's initial (two for northeast and
// the like) and the number; us-east-1 is use1, ap-northeast-1 apne1,
// us-gov-west-1 usgw1. It derives rather than looks up, so a region the
// catalog does not price yet still gets a code.
func RegionCode(region string) string {
	parts := strings.Split(region, "-")
	if len(parts) < 3 {
		return region
	}
	var b strings.Builder
	b.WriteString(parts[0])
	for _, w := range parts[1 : len(parts)-1] {
		if w == "" {
			continue
		}
		b.WriteByte(w[0])
		for _, pole := range []string{"north", "south"} {
			if rest, ok := strings.CutPrefix(w, pole); ok && rest != "" {
				b.WriteByte(rest[0])
			}
		}
	}
	b.WriteString(parts[len(parts)-1])
	return b.String()
}
