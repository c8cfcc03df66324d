package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The same binary gives the same archive, byte for byte; another binary
// another digest.
func TestBuildIsReproducible(t *testing.T) {
	c := Config{Arch: "amd64", Version: "v1.2.3", Ref: "capstan:v1.2.3"}
	a, err := Build([]byte("binary"), c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build([]byte("binary"), c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Archive, b.Archive) || a.Digest != b.Digest {
		t.Errorf("two builds differ: %s, %s", a.Digest, b.Digest)
	}
	other, err := Build([]byte("other binary"), c)
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest == a.Digest {
		t.Error("another binary has the same digest")
	}
}

// The archive is an OCI layout whose index names the image and whose
// manifest's blobs are all there, with the binary at /capstan run as a
// non-root user.
func TestBuildWritesAnOCILayout(t *testing.T) {
	img, err := Build([]byte("binary"), Config{Arch: "arm64", Version: "v1.2.3", Ref: "capstan:v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	files := untar(t, img.Archive)
	if files["oci-layout"] == nil || files["manifest.json"] == nil {
		t.Fatalf("archive holds %v", keys(files))
	}
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	decode(t, files["index.json"], &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != img.Digest || index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "capstan:v1.2.3" {
		t.Fatalf("index %+v, want one manifest %s named capstan:v1.2.3", index, img.Digest)
	}
	var manifest struct {
		Config struct{ Digest string }   `json:"config"`
		Layers []struct{ Digest string } `json:"layers"`
	}
	decode(t, blobOf(t, files, img.Digest), &manifest)
	var config struct {
		Architecture string `json:"architecture"`
		Config       struct {
			User       string   `json:"User"`
			Entrypoint []string `json:"Entrypoint"`
		} `json:"config"`
	}
	decode(t, blobOf(t, files, manifest.Config.Digest), &config)
	if config.Architecture != "arm64" || config.Config.User != nonRoot || strings.Join(config.Config.Entrypoint, " ") != "/capstan" {
		t.Errorf("config %+v", config)
	}
	if len(manifest.Layers) != 1 {
		t.Fatalf("layers %v", manifest.Layers)
	}
	layer := blobOf(t, files, manifest.Layers[0].Digest)
	gz, err := gzipReader(layer)
	if err != nil {
		t.Fatal(err)
	}
	if got := untar(t, gz)["capstan"]; string(got) != "binary" {
		t.Errorf("layer's /capstan is %q", got)
	}
}

func TestAppVersion(t *testing.T) {
	got, err := appVersion(filepath.Join("..", "..", "charts", "capstan", "Chart.yaml"))
	if err != nil || !strings.HasPrefix(got, "v") {
		t.Errorf("appVersion = %q, %v; want the chart's v-prefixed appVersion", got, err)
	}
	path := filepath.Join(t.TempDir(), "Chart.yaml")
	if err := os.WriteFile(path, []byte("name: x\nversion: 0.1.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := appVersion(path); err == nil {
		t.Error("a chart without appVersion was accepted")
	}
}

func untar(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	r := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: time %s, owner %d:%d", h.Name, h.ModTime, h.Uid, h.Gid)
		}
		if h.Typeflag == tar.TypeReg {
			files[h.Name], err = io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func blobOf(t *testing.T, files map[string][]byte, digest string) []byte {
	t.Helper()
	data, ok := files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
	if !ok || (blob{data: data}).digest() != digest {
		t.Fatalf("blob %s missing or corrupt", digest)
	}
	return data
}

func decode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func gzipReader(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
