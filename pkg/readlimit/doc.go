// Package readlimit reads files and streams whole, but never more than a
// cap: a file or stream over it is refused after reading one byte past
// the cap, and a path that names no regular file (a named pipe, a device
// such as /dev/zero, a directory) is refused before reading at all, so a
// hostile or mistaken path can neither exhaust memory nor block forever.
// Every file Capstan reads from disk and every stream it reads whole goes
// through it; the forbidigo rule in .golangci.yml keeps os.ReadFile and
// io.ReadAll out of the rest of pkg/ and cmd/. The caps are listed in
// docs/security.md ("Input limits").
package readlimit
