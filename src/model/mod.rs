//! The format-neutral model: [`Value`] (what the data says), [`SpanTree`] (which bytes say it)
//! and [`Path`] (how to name one part of it in every format).

mod path;
mod span;
mod text;
mod value;

pub use path::{Path, PathParseError, PathSegment};
pub use span::{
    ByteRole, Children, Finder, Node, NodeAt, NodeId, NodeMap, Nodes, Run, Segment, Span, SpanTree,
    SpanTreeBuilder, TreeError,
};
pub(crate) use span::{GraftRoot, KeyMap};
pub use text::CompactText;
pub use value::{
    format_float, Float, FloatWidth, Kind, RawField, Timestamp, Value, WireType, DEBUG_DEPTH,
    INT_MAX, INT_MIN,
};
