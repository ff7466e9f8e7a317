//! Compiles the workspace's `.proto` subsets with protox (pure Rust, no
//! `protoc`) and generates prost code for them.

use std::error::Error;

/// Directory holding the `.proto` files, relative to this crate: a symlink to the
/// workspace's `proto/`, so `cargo package` copies the files into the crate and the
/// packaged crate builds on its own.
const PROTO_ROOT: &str = "proto";

/// Every file compiled into the crate; imports are resolved from `PROTO_ROOT`.
const PROTO_FILES: &[&str] = &[
    "kvproto/metapb.proto",
    "kvproto/errorpb.proto",
    "kvproto/kvrpcpb.proto",
    "kvproto/coprocessor.proto",
    "kvproto/tikvpb.proto",
    "kvproto/pdpb.proto",
    "tipb/schema.proto",
    "tipb/expression.proto",
    "tipb/executor.proto",
    "tipb/select.proto",
    "tipb/checksum.proto",
    "tipb/analyze.proto",
    "enginepb/changeset.proto",
];

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={PROTO_ROOT}");
    for file in PROTO_FILES {
        println!("cargo:rerun-if-changed={PROTO_ROOT}/{file}");
    }

    let fds = protox::compile(PROTO_FILES, [PROTO_ROOT])?;
    let mut config = prost_build::Config::new();
    config.bytes(["."]);
    // Feature `grpc`: tonic's service generator writes the servers and clients of the
    // `service` blocks into the same modules; without it only messages are generated.
    #[cfg(feature = "grpc")]
    config.service_generator(
        tonic_prost_build::configure()
            .build_transport(false)
            .generate_default_stubs(true)
            .service_generator(),
    );
    config.compile_fds(fds)?;
    // `tikvpb` declares only a service: without the `grpc` feature prost writes no file for
    // it, and `src/lib.rs` includes an empty module instead.
    let tikvpb = std::path::Path::new(&std::env::var("OUT_DIR")?).join("tikvpb.rs");
    if !tikvpb.exists() {
        std::fs::write(tikvpb, "")?;
    }
    Ok(())
}
