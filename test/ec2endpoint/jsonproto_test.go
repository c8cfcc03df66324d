package ec2endpoint_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func TestJSONProtocolErrors(t *testing.T) {
	f := newFixture(t, profile())
	for _, tc := range []struct {
		target, body string
		want         map[string]string
	}{
		{"AmazonSQS.PurgeQueue", `{}`, map[string]string{"__type": "com.amazon.coral.service#UnknownOperationException", "message": "The operation AmazonSQS.PurgeQueue is not served by this endpoint"}},
		{"AmazonSSM.PutParameter", `{}`, map[string]string{"__type": "com.amazon.coral.service#UnknownOperationException", "message": "The operation AmazonSSM.PutParameter is not served by this endpoint"}},
		{"AmazonSQS.GetQueueUrl", `{"QueueName":`, nil},
	} {
		req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Target", tc.target)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		err = json.NewDecoder(resp.Body).Decode(&got)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: status %d, %v", tc.target, resp.StatusCode, err)
		}
		if tc.want == nil {
			if got["__type"] != "SerializationException" {
				t.Errorf("%s with a malformed body: %v", tc.target, got)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.target, diff)
		}
	}
}

func TestInterruptionQueueName(t *testing.T) {
	if _, err := ec2endpoint.New(ec2endpoint.Options{Profile: profile(), InterruptionQueue: "no spaces"}); err == nil {
		t.Error("a queue name with spaces: no error")
	}
}
