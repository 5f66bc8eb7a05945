//! Loading .proto files and descriptor sets.
