"""Local models beyond the built-in one: manifests, the catalog, downloads and installs."""
