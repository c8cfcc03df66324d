package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// epoch is every timestamp in the image: reproducible builds record no
// build time.
var epoch = time.Unix(0, 0).UTC()

// nonRoot is the image's user, as the chart's securityContext runs it.
const nonRoot = "65532:65532"

// Config is what varies between images.
type Config struct {
	// Arch is the binary's GOARCH.
	Arch string
	// Version labels the image (org.opencontainers.image.version).
	Version string
	// Ref is the image's name and tag, repository:tag.
	Ref string
}

// Image is a built image: its OCI archive and its manifest's digest.
type Image struct {
	Archive []byte
	Digest  string
}

// blob is content-addressed content of the layout.
type blob struct {
	mediaType string
	data      []byte
}

func (b blob) digest() string {
	sum := sha256.Sum256(b.data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (b blob) path() string { return "blobs/sha256/" + b.digest()[len("sha256:"):] }

func (b blob) descriptor() map[string]any {
	return map[string]any{"mediaType": b.mediaType, "digest": b.digest(), "size": len(b.data)}
}

// Build puts binary at /capstan in a one-layer image with no base and
// writes it as an OCI image layout in a tar archive, plus the
// manifest.json `docker load` reads.
func Build(binary []byte, c Config) (Image, error) {
	layerTar, err := tarball([]file{{name: "capstan", mode: 0o555, data: binary}})
	if err != nil {
		return Image{}, fmt.Errorf("writing layer, %w", err)
	}
	layer, err := gzipped(layerTar)
	if err != nil {
		return Image{}, fmt.Errorf("compressing layer, %w", err)
	}
	diffID := blob{data: layerTar}.digest()
	layerBlob := blob{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", data: layer}
	config, err := json.Marshal(map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": c.Arch,
		"os":           "linux",
		"config": map[string]any{
			"User":       nonRoot,
			"Entrypoint": []string{"/capstan"},
			"Cmd":        []string{"controller"},
			"WorkingDir": "/",
			"Labels":     map[string]string{"org.opencontainers.image.version": c.Version, "org.opencontainers.image.title": "capstan"},
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339), "created_by": "hack/image: the capstan binary"}},
	})
	if err != nil {
		return Image{}, fmt.Errorf("encoding config, %w", err)
	}
	configBlob := blob{mediaType: "application/vnd.oci.image.config.v1+json", data: config}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        configBlob.descriptor(),
		"layers":        []any{layerBlob.descriptor()},
	})
	if err != nil {
		return Image{}, fmt.Errorf("encoding manifest, %w", err)
	}
	manifestBlob := blob{mediaType: "application/vnd.oci.image.manifest.v1+json", data: manifest}
	desc := manifestBlob.descriptor()
	desc["annotations"] = map[string]string{"io.containerd.image.name": c.Ref, "org.opencontainers.image.ref.name": c.Ref}
	desc["platform"] = map[string]string{"architecture": c.Arch, "os": "linux"}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{desc}})
	if err != nil {
		return Image{}, fmt.Errorf("encoding index, %w", err)
	}
	dockerManifest, err := json.Marshal([]map[string]any{{"Config": configBlob.path(), "RepoTags": []string{c.Ref}, "Layers": []string{layerBlob.path()}}})
	if err != nil {
		return Image{}, fmt.Errorf("encoding docker manifest, %w", err)
	}
	files := []file{
		{name: "oci-layout", mode: 0o444, data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", mode: 0o444, data: index},
		{name: "manifest.json", mode: 0o444, data: dockerManifest},
	}
	for _, b := range []blob{layerBlob, configBlob, manifestBlob} {
		files = append(files, file{name: b.path(), mode: 0o444, data: b.data})
	}
	archive, err := tarball(files)
	if err != nil {
		return Image{}, fmt.Errorf("writing archive, %w", err)
	}
	return Image{Archive: archive, Digest: manifestBlob.digest()}, nil
}

type file struct {
	name string
	mode int64
	data []byte
}

// tarball writes files in order with fixed owners and times; the parent
// directories of nested names come first.
func tarball(files []file) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		for i := range len(f.name) {
			if f.name[i] != '/' || dirs[f.name[:i+1]] {
				continue
			}
			dirs[f.name[:i+1]] = true
			if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: f.name[:i+1], Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipped compresses with no name or time in the header.
func gzipped(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	w.ModTime = epoch
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
