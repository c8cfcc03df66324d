package ec2endpoint

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"slices"
	"strings"

	nodeadm "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// maxUserData is EC2's limit on user data, before base64 (EC2 User
// Guide, "Run commands when you launch an EC2 instance with user data
// input": "user data is limited to 16 KB, in raw form").
const maxUserData = 16 * 1024

// nodeAgent is the software of an image that reads its user data.
type nodeAgent int

const (
	// agentNodeadm is AL2023's nodeadm (the EKS AL2023 images and the
	// account's custom AL2023 image).
	agentNodeadm nodeAgent = iota
	// agentBottlerocket is Bottlerocket's early-boot-config, which reads
	// TOML settings.
	agentBottlerocket
)

// agentOf is the agent of img, by its name (see synthesizeImages).
func agentOf(img image) nodeAgent {
	if strings.HasPrefix(img.name, "bottlerocket-") {
		return agentBottlerocket
	}
	return agentNodeadm
}

// userDataBytes is a launch template's UserData decoded, or EC2's
// refusal: not base64, or too long.
func userDataBytes(b64 string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errorf("InvalidUserData.Malformed", "Invalid BASE64 encoding of user data.")
	}
	if len(raw) > maxUserData {
		return nil, errorf("InvalidUserData.Malformed", "User data is limited to %d bytes.", maxUserData)
	}
	return raw, nil
}

// whyNotJoining is why the node of an instance of image imageID
// launched with user data b64 would not join the endpoint's cluster:
// what the node's own software would refuse, or a node configured for
// another cluster; "" when it joins. An image the endpoint does not
// know never launches.
func (s *Server) whyNotJoining(b64, imageID string) string {
	images := s.imageList()
	i := slices.IndexFunc(images, func(img image) bool { return img.id == imageID })
	if i < 0 {
		return ""
	}
	raw, err := userDataBytes(b64)
	if err == nil {
		switch agentOf(images[i]) {
		case agentBottlerocket:
			err = s.checkBottlerocket(raw)
		default:
			err = s.checkNodeadm(raw)
		}
	}
	if err != nil {
		return fmt.Sprintf("the node of image %s (%s) does not join cluster %s with its user data: %v", imageID, images[i].name, s.opts.ClusterName, err)
	}
	return ""
}

// checkNodeadm refuses user data nodeadm would refuse (NodeadmCluster)
// or that names another cluster than the endpoint's.
func (s *Server) checkNodeadm(raw []byte) error {
	c, err := NodeadmCluster(raw)
	if err != nil {
		return err
	}
	return s.sameCluster(c.Name, c.APIServerEndpoint, base64.StdEncoding.EncodeToString(c.CertificateAuthority), c.CIDR)
}

// NodeadmCluster reads user data as nodeadm does
// (amazon-eks-ami nodeadm/internal/configprovider/userdata.go): a MIME
// multi-part document's parts of type application/node.eks.aws, else
// the whole document, each a NodeConfig; later ones override earlier
// ones. It returns the merged cluster details, which must pass
// nodeadm's validation (nodeadm/internal/api/validation.go).
//
// Stricter than nodeadm, which decodes leniently: a NodeConfig with a
// field nodeadm's v1alpha1 types (the module version go.mod names) do
// not have, or a kubelet config key KubeletConfiguration v1beta1 does
// not have, is refused, since nodeadm would drop it unseen.
func NodeadmCluster(raw []byte) (nodeadm.ClusterDetails, error) {
	var merged nodeadm.ClusterDetails
	docs, err := nodeConfigDocuments(raw)
	if err != nil {
		return merged, err
	}
	for i, doc := range docs {
		cfg, err := decodeNodeConfig(doc)
		if err != nil {
			return merged, fmt.Errorf("NodeConfig %d: %w", i+1, err)
		}
		c := cfg.Spec.Cluster
		merged.Name = cmpOr(c.Name, merged.Name)
		merged.APIServerEndpoint = cmpOr(c.APIServerEndpoint, merged.APIServerEndpoint)
		merged.CIDR = cmpOr(c.CIDR, merged.CIDR)
		if c.CertificateAuthority != nil {
			merged.CertificateAuthority = c.CertificateAuthority
		}
	}
	switch {
	case merged.Name == "":
		err = errors.New("nodeadm: Name is missing in cluster configuration")
	case merged.APIServerEndpoint == "":
		err = errors.New("nodeadm: Apiserver endpoint is missing in cluster configuration")
	case merged.CertificateAuthority == nil:
		err = errors.New("nodeadm: Certificate authority is missing in cluster configuration")
	case merged.CIDR == "":
		err = errors.New("nodeadm: CIDR is missing in cluster configuration")
	}
	return merged, err
}

// nodeConfigDocuments are the NodeConfig documents of user data, as
// nodeadm finds them.
func nodeConfigDocuments(raw []byte) ([][]byte, error) {
	r, ok := multipartOf(raw)
	if !ok {
		return [][]byte{raw}, nil
	}
	var docs [][]byte
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part: %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part: %w", err)
		}
		mediaType, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part's Content-Type: %w", err)
		}
		if mediaType == "application/"+nodeadm.GroupVersion.Group {
			docs = append(docs, body)
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("nodeadm: could not find NodeConfig within UserData")
	}
	return docs, nil
}

// multipartOf reads raw as a MIME multi-part document; false when it is
// not one (nodeadm then reads it whole).
func multipartOf(raw []byte) (*multipart.Reader, bool) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, false
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return nil, false
	}
	return multipart.NewReader(msg.Body, params["boundary"]), true
}

// decodeNodeConfig decodes one NodeConfig strictly, its kubelet config
// included.
func decodeNodeConfig(doc []byte) (*nodeadm.NodeConfig, error) {
	var cfg nodeadm.NodeConfig
	if err := yaml.UnmarshalStrict(doc, &cfg); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if cfg.APIVersion != nodeadm.GroupVersion.String() || cfg.Kind != "NodeConfig" {
		return nil, fmt.Errorf("apiVersion %q kind %q is not a %s NodeConfig", cfg.APIVersion, cfg.Kind, nodeadm.GroupVersion)
	}
	if len(cfg.Spec.Kubelet.Config) > 0 {
		raw, err := json.Marshal(cfg.Spec.Kubelet.Config)
		if err != nil {
			return nil, fmt.Errorf("reading kubelet config: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var k kubeletv1beta1.KubeletConfiguration
		if err := dec.Decode(&k); err != nil {
			return nil, fmt.Errorf("kubelet config is not a KubeletConfiguration v1beta1: %w", err)
		}
	}
	return &cfg, nil
}

// sameCluster refuses a node configured for another cluster than the
// endpoint's: it would not join (another endpoint or CA) or would give
// its pods a wrong nameserver (another service CIDR, from which the
// cluster DNS address is derived). A field the endpoint was not given is
// not compared.
func (s *Server) sameCluster(name, endpoint, caBundle, cidr string) error {
	o := s.opts
	switch {
	case name != o.ClusterName:
		return fmt.Errorf("cluster name %q is not %q", name, o.ClusterName)
	case o.ClusterEndpoint != "" && endpoint != o.ClusterEndpoint:
		return fmt.Errorf("API server %q is not the cluster's %q", endpoint, o.ClusterEndpoint)
	case o.ClusterCABundle != "" && caBundle != o.ClusterCABundle:
		return errors.New("the certificate authority is not the cluster's")
	case cidr != "" && cidr != o.ServiceCIDR:
		return fmt.Errorf("service CIDR %q is not the cluster's %q", cidr, o.ServiceCIDR)
	}
	return nil
}
