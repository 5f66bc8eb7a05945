//! Media types: every reading of a Content-Type value (or a HAR `mimeType`) in one place. What
//! format one names, whether it names text or a media file that no data format reads, and the
//! bare media type itself.

use crate::codec::Format;

/// A content type's media type: lowercase, parameters (`; charset=…`) left off. The one
/// parser of a Content-Type value.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The value of parameter `name` (case-insensitive) of a Content-Type value, trimmed.
///
/// ```
/// use wirelens::capture::media::{hint_for_media_type, parameter};
/// use wirelens::codec::Format;
///
/// let ct = "application/x-protobuf; Delimited = true; charset=utf-8";
/// assert_eq!(parameter(ct, "delimited"), Some("true"));
/// assert_eq!(parameter(ct, "messageType"), None);
/// assert_eq!(hint_for_media_type("avro/binary"), Some(Format::Avro));
/// ```
pub fn parameter<'a>(content_type: &'a str, name: &str) -> Option<&'a str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The format a media type names, if it names one of ours.
pub fn hint_for_media_type(content_type: &str) -> Option<Format> {
    let media = media_type(content_type);
    match media.as_str() {
        "application/json" | "text/json" | "application/grpc+json" => Some(Format::Json),
        "application/msgpack" | "application/x-msgpack" | "application/vnd.msgpack" => {
            Some(Format::MessagePack)
        }
        "application/cbor" => Some(Format::Cbor),
        // Avro's own and the common unofficial names (read only with a writer's schema).
        "avro/binary"
        | "application/avro"
        | "application/x-avro-binary"
        | "application/vnd.apache.avro+binary" => Some(Format::Avro),
        "application/protobuf"
        | "application/x-protobuf"
        | "application/vnd.google.protobuf"
        | "application/grpc"
        | "application/grpc+proto"
        | "application/grpc-web"
        | "application/grpc-web+proto"
        | "application/grpc-web-text"
        | "application/grpc-web-text+proto" => Some(Format::Protobuf),
        m if m.ends_with("+json") => Some(Format::Json),
        m if m.ends_with("+cbor") => Some(Format::Cbor),
        _ => None,
    }
}

/// The media type of a Content-Type value if it names text that no data format reads: `text/*`
/// (except `text/event-stream` and JSON subtypes, which may hold JSON documents), JavaScript,
/// XML and XHTML (`*+xml`, SVG), form data. Lower case, parameters dropped.
///
/// ```
/// use wirelens::capture::media::text_media_type;
///
/// assert_eq!(text_media_type("text/html; charset=utf-8").as_deref(), Some("text/html"));
/// assert_eq!(text_media_type("application/javascript").as_deref(), Some("application/javascript"));
/// assert_eq!(text_media_type("application/json"), None);
/// assert_eq!(text_media_type("application/cbor"), None);
/// ```
pub fn text_media_type(content_type: &str) -> Option<String> {
    let media = media_type(content_type);
    let (kind, sub) = media.split_once('/')?;
    if sub.contains("json") || sub.is_empty() {
        return None;
    }
    let text = match kind {
        "text" => sub != "event-stream",
        "application" => {
            matches!(
                sub,
                "javascript"
                    | "x-javascript"
                    | "ecmascript"
                    | "xml"
                    | "xhtml+xml"
                    | "x-www-form-urlencoded"
                    | "graphql"
                    | "x-sh"
                    | "rtf"
            ) || sub.ends_with("+xml")
        }
        "image" => sub == "svg+xml",
        _ => false,
    };
    text.then_some(media)
}

/// The media type of a Content-Type value if it names a media file no data format reads:
/// `image/*` (but SVG, which is XML text), `audio/*`, `video/*`, `font/*`. Lower case,
/// parameters dropped.
///
/// ```
/// use wirelens::capture::media::media_file_type;
///
/// assert_eq!(media_file_type("image/png").as_deref(), Some("image/png"));
/// assert_eq!(media_file_type("image/svg+xml"), None);
/// assert_eq!(media_file_type("application/json"), None);
/// ```
pub fn media_file_type(content_type: &str) -> Option<String> {
    let media = media_type(content_type);
    let (kind, sub) = media.split_once('/')?;
    let file = matches!(kind, "image" | "audio" | "video" | "font") && !sub.is_empty();
    (file && sub != "svg+xml").then_some(media)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints() {
        assert_eq!(
            hint_for_media_type("application/JSON; charset=utf-8"),
            Some(Format::Json)
        );
        assert_eq!(
            hint_for_media_type("application/problem+json"),
            Some(Format::Json)
        );
        assert_eq!(
            hint_for_media_type("application/x-msgpack"),
            Some(Format::MessagePack)
        );
        assert_eq!(
            hint_for_media_type("application/grpc-web-text+proto"),
            Some(Format::Protobuf)
        );
        assert_eq!(hint_for_media_type("text/html"), None);
    }
}
