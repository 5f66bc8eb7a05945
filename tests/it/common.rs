//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// What a finished `wirelens` run printed.
pub struct Run {
    /// The exit status (`None` if a signal ended it).
    pub code: Option<i32>,
    /// Standard output, as text.
    pub stdout: String,
    /// Standard error, as text.
    pub stderr: String,
}

/// Runs the `wirelens` binary with `args`, then `input` as its last argument.
pub fn run_wirelens(args: &[&str], input: &Path) -> Run {
    let out = assert_cmd::Command::cargo_bin("wirelens")
        .expect("the wirelens binary is built")
        .args(args)
        .arg(input)
        .output()
        .expect("runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

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

/// A hex dump laid out as `xxd` prints it: offset, eight groups of two bytes, two spaces, ASCII.
pub fn xxd(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (row, chunk) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:08x}:", row * 16));
        for i in 0..16 {
            if i % 2 == 0 {
                out.push(' ');
            }
            match chunk.get(i) {
                Some(b) => out.push_str(&format!("{b:02x}")),
                None => out.push_str("  "),
            }
        }
        out.push_str("  ");
        for &b in chunk {
            out.push(if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '.'
            });
        }
        out.push('\n');
    }
    out
}

/// A `.proto` whose import sits in another folder, under `root`: `api/order.proto` imports
/// `common/money.proto`, which is in `third_party/protos/`. Returns the file and that folder.
pub fn proto_with_import_elsewhere(root: &Path) -> (PathBuf, PathBuf) {
    let api = root.join("api");
    let deps = root.join("third_party").join("protos");
    std::fs::create_dir_all(&api).expect("folder");
    std::fs::create_dir_all(deps.join("common")).expect("folder");
    let order = api.join("order.proto");
    std::fs::write(
        &order,
        "syntax = \"proto3\";\npackage shop;\nimport \"common/money.proto\";\nmessage Order { int32 id = 1; common.Money total = 2; }\n",
    )
    .expect("write");
    std::fs::write(
        deps.join("common/money.proto"),
        "syntax = \"proto3\";\npackage common;\nmessage Money { int64 units = 1; string currency = 2; }\n",
    )
    .expect("write");
    (order, deps)
}

/// A pcap of TCP streams (client port 40000, 40001, … to port 80), each `size` bytes of `x` in
/// segments of 60,000 bytes.
pub fn pcap_of_x_streams(streams: u16, size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(0xA1B2_C3D4u32.to_le_bytes());
    out.extend(2u16.to_le_bytes());
    out.extend(4u16.to_le_bytes());
    out.extend([0u8; 8]);
    out.extend(65_535u32.to_le_bytes());
    out.extend(1u32.to_le_bytes());
    for s in 0..streams {
        let mut seq = 1000u32;
        let mut left = size;
        while left > 0 {
            let n = left.min(60_000);
            left -= n;
            let mut tcp = Vec::new();
            tcp.extend((40_000 + s).to_be_bytes());
            tcp.extend(80u16.to_be_bytes());
            tcp.extend(seq.to_be_bytes());
            tcp.extend(0u32.to_be_bytes());
            tcp.extend([5 << 4, 0x18]);
            tcp.extend(65_535u16.to_be_bytes());
            tcp.extend([0u8; 4]);
            tcp.extend([0x08u8, b'x'].iter().cycle().take(n));
            seq += n as u32;
            let total = u16::try_from(20 + tcp.len()).expect("fits an IP packet");
            let mut frame = vec![2u8; 6];
            frame.extend([4u8; 6]);
            frame.extend([0x08, 0x00, 0x45, 0]);
            frame.extend(total.to_be_bytes());
            frame.extend([0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            frame.extend(tcp);
            let len = u32::try_from(frame.len()).expect("small frame");
            out.extend([0u8; 8]);
            out.extend(len.to_le_bytes());
            out.extend(len.to_le_bytes());
            out.extend(frame);
        }
    }
    out
}
