package scheduling

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestParseInt64AgreesWithStrconv(t *testing.T) {
	cases := []string{
		"", "+", "-", "0", "-0", "+0", "00", "05", "+5", "-5", "1_000", "0x10", " 1", "1 ",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551616", "99999999999999999999",
		"0009223372036854775807", "abc", "1a", "٣",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789+-_ax"
	for range 20000 {
		b := make([]byte, rng.IntN(22))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, err := strconv.ParseInt(s, 10, 64)
		got, ok := parseInt64(s)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("parseInt64(%q) = %d, %t; strconv says %d, %v", s, got, ok, want, err)
		}
	}
}
