//! `wirelens infer-avro` and `wirelens infer-proto`: a schema inferred from a payload.

use std::io::Write;

use super::{
    read_input, read_payload, Failure, InferAvroArgs, InferProtoArgs, LimitArgs, ReadArgs,
};
use crate::codec::{Document, Format};

/// The payload a schema is inferred from (`infer-avro`, `infer-proto`): read as `inspect` reads
/// it, without a schema.
pub(super) fn read_for_inference(
    path: &std::path::Path,
    from: Option<Format>,
    limits: &LimitArgs,
) -> Result<Document, Failure> {
    let plan = ReadArgs {
        from,
        limits: limits.clone(),
        ..ReadArgs::default()
    }
    .resolve()?;
    let input = read_input(path)?;
    read_payload(&input, &plan)?
        .outcome
        .map_err(|e| Failure::Input(e.to_string()))
}

pub(super) fn infer_avro_cmd(args: &InferAvroArgs, out: &mut dyn Write) -> Result<(), Failure> {
    use crate::codec::avro::infer::{infer, InferOptions};
    let doc = read_for_inference(&args.input, args.from, &args.limits)?;
    let options = InferOptions {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        logical: args.infer_logical,
    };
    let schema = infer(&doc.value, &options).map_err(|e| Failure::Input(format!("error: {e}")))?;
    out.write_all(schema.text().as_bytes())?;
    out.write_all(b"\n")?;
    Ok(())
}

pub(super) fn infer_proto_cmd(args: &InferProtoArgs, out: &mut dyn Write) -> Result<(), Failure> {
    use crate::codec::protobuf::infer::{infer, InferOptions};
    let doc = read_for_inference(&args.input, args.from, &args.limits)?;
    let options = InferOptions {
        message: args.message.clone(),
        package: args.package.clone(),
    };
    let inferred =
        infer(&doc.value, &options).map_err(|e| Failure::Input(format!("error: {e}")))?;
    out.write_all(inferred.proto.as_bytes())?;
    Ok(())
}
