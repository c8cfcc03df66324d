package flavors

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Each OpenModel the pods serve is read once, however many pods serve
// it; pods serving no model cause no read.
func TestGatherModelsReadsEachModelOnce(t *testing.T) {
	serving := func(model string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{ModelNameLabelKey: model}}}
	}
	llama := &OpenModel{Name: "llama"}
	missing := errors.New("not found")
	var reads []string
	m := GatherModels([]*corev1.Pod{serving("llama"), {}, serving("gpt"), serving("llama"), serving("gpt")}, func(name string) (*OpenModel, error) {
		reads = append(reads, name)
		if name == "llama" {
			return llama, nil
		}
		return nil, missing
	})
	if diff := cmp.Diff([]string{"llama", "gpt"}, reads); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name          string
		models        Models
		lookup        string
		want          *OpenModel
		wantInstalled bool
		wantErr       bool
	}{
		{"read", m, "llama", llama, true, false},
		{"failed", m, "gpt", nil, true, true},
		{"never read", m, "qwen", nil, true, true},
		{"llmaz not installed", Models{}, "llama", nil, false, false},
	} {
		got, installed, err := tc.models.Lookup(tc.lookup)
		if got != tc.want || installed != tc.wantInstalled || (err != nil) != tc.wantErr {
			t.Errorf("%s: Lookup(%s) = %v, %v, %v", tc.name, tc.lookup, got, installed, err)
		}
	}
	if _, _, err := m.Lookup("gpt"); !errors.Is(err, missing) {
		t.Errorf("the read's error is kept: %v", err)
	}
}
