//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

/// Path of a file under `tests/data/`.
pub fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// The protoc binary the tests compare against: Google's, shipped by the `protoc-bin-vendored`
/// dev-dependency, so no system package is needed.
pub fn protoc() -> PathBuf {
    protoc_bin_vendored::protoc_bin_path()
        .expect("protoc-bin-vendored has a protoc for this platform")
}
