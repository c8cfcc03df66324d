//go:build e2e

package aws

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// A launch EC2 refuses for a configuration reason (the profile's fault on
// c4.large: InvalidParameterValue, "Invalid IAM Instance Profile name",
// for its first five fleets) ends with Launched=False naming the code, an
// event naming it, the NodeClaim deleted at the launch timeout, and the
// pod Running once the refusals stop.
func TestRefusedLaunchTimesOutThenRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := start(t, setup{instanceTypes: []string{"c4.large"}, capacityTypes: []string{v1.CapacityTypeOnDemand}})
	s.ready()
	s.spreadOut(1)
	var refused v1.NodeClaim
	s.g.Eventually(func(g gomega.Gomega) {
		claims := s.claims()
		g.Expect(claims).NotTo(gomega.BeEmpty())
		c := meta.FindStatusCondition(claims[0].Status.Conditions, v1.ConditionTypeLaunched)
		g.Expect(c).NotTo(gomega.BeNil())
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(gomega.Equal("InvalidParameterValue"))
		g.Expect(c.Message).To(gomega.ContainSubstring("Invalid IAM Instance Profile name"))
		refused = claims[0]
	}).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(eventMessages(g, refused.Name, "LaunchFailed")).To(gomega.ContainElement(gomega.ContainSubstring("InvalidParameterValue")))
	}).Should(gomega.Succeed())
	s.g.Eventually(func(g gomega.Gomega) {
		err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(&refused), &v1.NodeClaim{})
		g.Expect(errors.IsNotFound(err)).To(gomega.BeTrue(), "nodeclaim %s still there", refused.Name)
		g.Expect(eventMessages(g, refused.Name, "LaunchTimeout")).NotTo(gomega.BeEmpty())
	}).WithTimeout(launchTimeout + 30*time.Second).Should(gomega.Succeed())
	claims := s.settled(1)
	s.g.Expect(launchedBy(claims)).To(gomega.Equal(map[string]int{"on-demand/": 1}))
}

// eventMessages are the messages of the events of reason on the
// NodeClaim named name.
func eventMessages(g gomega.Gomega, name, reason string) []string {
	events := &corev1.EventList{}
	g.Expect(cluster.Client.List(context.Background(), events)).To(gomega.Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Reason == reason && e.InvolvedObject.Kind == "NodeClaim" && e.InvolvedObject.Name == name {
			out = append(out, strings.TrimSpace(e.Message))
		}
	}
	return out
}
