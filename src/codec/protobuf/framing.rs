//! Splitting gRPC bodies and length-delimited streams into messages.
