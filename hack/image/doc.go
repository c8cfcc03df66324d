// Command image writes Capstan's container image, an OCI image of the
// static capstan binary alone, as an OCI image layout in a tar archive
// (`make image`): loadable with `docker load`, `podman load`, `ctr images
// import` or `kind load image-archive`, with no registry reached while
// building. The image is reproducible: every timestamp, owner and mode is
// fixed, so the same binary gives the same digest. Its tag is the chart's
// appVersion, and the command refuses a binary whose `capstan version`
// says otherwise, so the chart's default image runs the version it names.
package main
