"""The command families of the `kforensics` CLI. Each module parses options, calls the library and renders;
`kforensics.cli` registers them."""
