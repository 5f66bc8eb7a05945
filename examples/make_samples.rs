//! Writes the bundled sample payloads into `samples/` (deterministically: the same bytes every run).
//!
//! Run with `cargo run --no-default-features --example make_samples`. Each sample is built as a
//! `Value` and encoded with wirelens' own encoders, keeping float widths as most libraries do
//! (a double stays float64), so the JSON and the binary
//! forms of one sample say the same thing.

#![allow(clippy::print_stdout)] // a generator that reports what it wrote

use std::path::Path;

use wirelens::codec::protobuf::framing::grpc_frame;
use wirelens::codec::protobuf::schema::Schema;
use wirelens::codec::{encode, EncodeOptions, Format};
use wirelens::model::{Float, Timestamp, Value};

/// A small deterministic generator (xorshift64*), so samples never change between runs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

fn cents(c: u64) -> Value {
    Value::f64(c as f64 / 100.0)
}

const MERCHANTS: &[(&str, &str)] = &[
    ("星巴克 Starbucks", "餐饮"),
    ("美团外卖", "餐饮"),
    ("海底捞火锅", "餐饮"),
    ("瑞幸咖啡 Luckin", "餐饮"),
    ("京东 JD.com", "购物"),
    ("淘宝 Taobao", "购物"),
    ("优衣库 UNIQLO", "购物"),
    ("盒马鲜生", "购物"),
    ("滴滴出行 DiDi", "交通"),
    ("上海地铁 Metro", "交通"),
    ("中国国航 Air China", "交通"),
    ("万达影城 Wanda Cinema", "娱乐"),
    ("腾讯视频 VIP", "娱乐"),
    ("网易云音乐", "娱乐"),
];

fn transactions(n: usize, seed: u64) -> Value {
    let mut rng = Rng(seed);
    let mut t: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z
    let records = (0..n)
        .map(|i| {
            t += 60 + rng.below(5_400) as i64;
            let (merchant, category) = MERCHANTS[rng.below(MERCHANTS.len() as u64) as usize];
            let amount = match category {
                "交通" => 300 + rng.below(12_000),
                "购物" => 990 + rng.below(150_000),
                _ => 1_500 + rng.below(40_000),
            };
            let status = match rng.below(100) {
                0..=91 => "completed",
                92..=95 => "pending",
                96..=98 => "refunded",
                _ => "failed",
            };
            Value::object([
                ("id", Value::text(format!("txn_{:08}", 40_000_000 + i))),
                (
                    "timestamp",
                    Value::text(
                        Timestamp {
                            seconds: t,
                            nanos: 0,
                        }
                        .to_rfc3339(),
                    ),
                ),
                ("amount", cents(amount)),
                ("merchant", Value::text(merchant)),
                ("category", Value::text(category)),
                ("status", Value::text(status)),
            ])
        })
        .collect();
    Value::object([
        ("account_id", Value::text("acc_7f3a9c21")),
        ("currency", Value::text("CNY")),
        ("count", Value::Int(n as i128)),
        ("transactions", Value::Array(records)),
    ])
}

fn risk_batch() -> Value {
    let mut rng = Rng(0x5eed_0002);
    let rules = ["R0012", "R0107", "R0233", "R1001", "R1450", "R2002"];
    let rows = (0..1000)
        .map(|i| {
            let hit = rng.below(100) < 7;
            let score = if hit {
                700 + rng.below(300)
            } else {
                rng.below(400)
            };
            Value::object([
                (
                    "user_id",
                    Value::Int(880_000_000 + i * 37 + i128::from(rng.below(30) as u8)),
                ),
                ("rule_code", Value::text(rng.pick(&rules))),
                ("hit", Value::Bool(hit)),
                ("score", Value::Int(i128::from(score))),
            ])
        })
        .collect();
    Value::object([
        ("code", Value::Int(0)),
        ("msg", Value::text("ok")),
        ("data", Value::Array(rows)),
    ])
}

fn user_profile() -> Value {
    Value::object([
        ("user_id", Value::Int(10_042)),
        ("username", Value::text("li_wei")),
        ("email", Value::text("li.wei@example.com")),
        ("is_active", Value::Bool(true)),
        (
            "roles",
            Value::Array(vec![Value::text("admin"), Value::text("editor")]),
        ),
        ("status", Value::text("active")),
    ])
}

fn iot_metrics() -> Value {
    Value::object([
        ("device_id", Value::text("sensor-0042")),
        (
            "metrics",
            Value::Array(vec![Value::f64(24.5), Value::f64(26.1), Value::f64(25.8)]),
        ),
        ("active", Value::Bool(true)),
        ("retry_count", Value::Int(3)),
    ])
}

fn order_graphql() -> Value {
    let category = Value::object([
        ("name", Value::text("Espresso machines")),
        (
            "parent",
            Value::object([
                ("name", Value::text("Coffee")),
                (
                    "parent",
                    Value::object([
                        ("name", Value::text("Kitchen")),
                        (
                            "parent",
                            Value::object([("name", Value::text("Home")), ("parent", Value::Null)]),
                        ),
                    ]),
                ),
            ]),
        ),
    ]);
    let edge = |sku: &str, name: &str, qty: i128, amount: u64| {
        Value::object([
            ("cursor", Value::text(format!("Y3Vyc29yOn{sku}"))),
            (
                "node",
                Value::object([
                    ("sku", Value::text(sku)),
                    (
                        "product",
                        Value::object([
                            ("id", Value::text(format!("UHJvZHVjdDo{sku}"))),
                            ("name", Value::text(name)),
                            ("category", category.clone()),
                        ]),
                    ),
                    ("quantity", Value::Int(qty)),
                    (
                        "price",
                        Value::object([
                            ("amount", cents(amount)),
                            ("currency", Value::text("EUR")),
                        ]),
                    ),
                ]),
            ),
        ])
    };
    Value::object([(
        "data",
        Value::object([(
            "order",
            Value::object([
                ("id", Value::text("T3JkZXI6OTkxMjM=")),
                ("number", Value::text("SO-2026-0099123")),
                ("placedAt", Value::text("2026-02-14T09:31:07.250Z")),
                (
                    "customer",
                    Value::object([
                        ("id", Value::text("Q3VzdG9tZXI6NDI=")),
                        ("name", Value::text("Ana Sousa")),
                        (
                            "address",
                            Value::object([
                                ("street", Value::text("Rua Augusta 27")),
                                ("city", Value::text("Lisboa")),
                                ("country", Value::text("PT")),
                                (
                                    "geo",
                                    Value::object([
                                        ("lat", Value::f64(38.7104)),
                                        ("lng", Value::f64(-9.1371)),
                                    ]),
                                ),
                            ]),
                        ),
                    ]),
                ),
                (
                    "items",
                    Value::object([
                        (
                            "edges",
                            Value::Array(vec![
                                edge("EM-100", "Barista Pro espresso machine", 1, 69_900),
                                edge("GR-220", "Conical burr grinder", 1, 18_950),
                                edge("CB-001", "Single-origin beans 1 kg", 3, 2_450),
                            ]),
                        ),
                        (
                            "pageInfo",
                            Value::object([
                                ("hasNextPage", Value::Bool(false)),
                                ("endCursor", Value::text("Y3Vyc29yOjM=")),
                            ]),
                        ),
                    ]),
                ),
                (
                    "total",
                    Value::object([("amount", cents(96_200)), ("currency", Value::text("EUR"))]),
                ),
            ]),
        )]),
    )])
}

/// Values every format says differently; the MessagePack form.
fn edge_cases_msgpack() -> Vec<(Value, Value)> {
    vec![
        (Value::text("u64_max"), Value::Int(u64::MAX.into())),
        (Value::text("beyond_2^53"), Value::Int((1i128 << 53) + 1)),
        (Value::text("i64_min"), Value::Int(i64::MIN.into())),
        (
            Value::text("raw_bytes"),
            Value::Bytes(vec![0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x7f, 0x80]),
        ),
        (Value::text("float32"), Value::Float(Float::f32(0.1))),
        (Value::text("float64"), Value::f64(0.1)),
        (
            Value::text("int_keys"),
            Value::Map(vec![
                (Value::Int(1), Value::text("one")),
                (Value::Int(2), Value::text("two")),
            ]),
        ),
        (
            Value::text("created"),
            Value::Timestamp(Timestamp {
                seconds: 1_767_225_600,
                nanos: 123_456_789,
            }),
        ),
        (Value::text("not_a_number"), Value::f64(f64::NAN)),
        (
            Value::text("text"),
            Value::text("naïve café · 日本語 · 中文 · 🚀"),
        ),
        (Value::text("app_ext"), Value::Ext(42, vec![1, 2, 3])),
    ]
}

/// The CBOR form: the same, plus what only CBOR says.
fn edge_cases_cbor() -> Value {
    let mut entries = edge_cases_msgpack();
    entries.retain(|(k, _)| k.as_str() != Some("app_ext"));
    entries.extend([
        (Value::text("bignum_2^64"), Value::int(1i128 << 64)),
        (
            Value::text("float16"),
            Value::Float(Float::f16(half::f16::from_f32(1.5))),
        ),
        (Value::text("undefined"), Value::Undefined),
        (
            Value::text("uri"),
            Value::Tag(32, Box::new(Value::text("https://example.com/a?b=c"))),
        ),
        (
            Value::text("epoch"),
            Value::Tag(1, Box::new(Value::Int(1_767_225_600))),
        ),
    ]);
    Value::Map(entries)
}

/// A typical FastAPI list endpoint's response: `{"code":0,"msg":"ok","data":[…]}`, 300 orders
/// with Chinese customer names and items, prices in yuan, RFC 3339 timestamps.
fn orders_api() -> Value {
    const CUSTOMERS: &[&str] = &[
        "王芳", "李娜", "张伟", "刘洋", "陈静", "杨磊", "赵敏", "黄强", "周杰", "吴婷",
    ];
    const ITEMS: &[&str] = &[
        "无线耳机",
        "机械键盘",
        "保温杯",
        "运动鞋",
        "茶叶礼盒",
        "充电宝",
        "台灯",
        "背包",
    ];
    const STATUS: &[&str] = &["paid", "shipped", "delivered", "refunded"];
    let mut rng = Rng(0x5eed_0300);
    let mut t: i64 = 1_764_547_200; // 2025-12-01T00:00:00Z
    let rows = (0..300)
        .map(|i| {
            t += 30 + rng.below(900) as i64;
            let items: Vec<Value> = (0..1 + rng.below(3))
                .map(|_| Value::text(rng.pick(ITEMS)))
                .collect();
            Value::object([
                ("id", Value::Int(880_000 + i as i128)),
                ("order_no", Value::text(format!("SO2025{:06}", 120_000 + i))),
                ("customer", Value::text(rng.pick(CUSTOMERS))),
                ("amount", cents(990 + rng.below(99_000))),
                ("quantity", Value::Int(1 + rng.below(5) as i128)),
                ("status", Value::text(rng.pick(STATUS))),
                (
                    "created_at",
                    Value::text(
                        Timestamp {
                            seconds: t,
                            nanos: 0,
                        }
                        .to_rfc3339(),
                    ),
                ),
                ("items", Value::Array(items)),
            ])
        })
        .collect();
    Value::object([
        ("code", Value::Int(0)),
        ("msg", Value::text("ok")),
        ("data", Value::Array(rows)),
    ])
}

const ORDERS_API_PROTO: &str = r#"// The orders endpoint's response, as the service would declare it.
syntax = "proto3";

package wirelens.samples;

message OrderList {
  int32 code = 1;
  string msg = 2;
  repeated Order data = 3;
}

message Order {
  int64 id = 1;
  string order_no = 2;
  string customer = 3;
  double amount = 4;
  int32 quantity = 5;
  string status = 6;
  string created_at = 7;
  repeated string items = 8;
}
"#;

const USER_PROFILE_PROTO: &str = r#"// The user profile sample's message, as a service would declare it.
syntax = "proto3";

package wirelens.samples;

message UserProfile {
  uint64 user_id = 1;
  string username = 2;
  string email = 3;
  bool is_active = 4;
  repeated string roles = 5;
  string status = 6;
}
"#;

const TRANSACTIONS_PROTO: &str = r#"// The transaction history sample's messages.
syntax = "proto3";

package wirelens.samples;

message TransactionHistory {
  string account_id = 1;
  string currency = 2;
  uint32 count = 3;
  repeated Transaction transactions = 4;
}

message Transaction {
  string id = 1;
  string timestamp = 2;
  double amount = 3;
  string merchant = 4;
  string category = 5;
  string status = 6;
}
"#;

/// Writes `proto` beside the samples and encodes each value with its message type `message`.
fn write_protobuf(
    dir: &Path,
    proto_name: &str,
    proto: &str,
    message: &str,
    values: &[(&str, Value)],
) -> Result<(), Box<dyn std::error::Error>> {
    let proto_path = dir.join(proto_name);
    std::fs::write(&proto_path, proto)?;
    let schema = Schema::from_proto_files(&[&proto_path], &[dir])?;
    let descriptor = schema.message(message)?;
    let options = EncodeOptions {
        message: Some(descriptor),
        ..EncodeOptions::default()
    };
    for (name, value) in values {
        let enc = encode(value, Format::Protobuf, &options)?;
        std::fs::write(dir.join(name), &enc.bytes)?;
        println!(
            "{name} ({} bytes, {} notes)",
            enc.bytes.len(),
            enc.notes.len()
        );
    }
    Ok(())
}

fn write(
    dir: &Path,
    name: &str,
    value: &Value,
    formats: &[Format],
) -> Result<(), Box<dyn std::error::Error>> {
    let options = EncodeOptions {
        floats: wirelens::codec::FloatPolicy::Keep,
        ..EncodeOptions::default()
    };
    for &f in formats {
        let enc = encode(value, f, &options)?;
        let path = dir.join(format!("{name}.{}", f.extension()));
        std::fs::write(&path, &enc.bytes)?;
        println!(
            "{} ({} bytes, {} notes)",
            path.display(),
            enc.bytes.len(),
            enc.notes.len()
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    std::fs::create_dir_all(&dir)?;
    use Format::{Cbor, Json, MessagePack};
    write(
        &dir,
        "transactions-1k",
        &transactions(1_000, 0x5eed_0001),
        &[Json, MessagePack, Cbor],
    )?;
    write(
        &dir,
        "transactions-15k",
        &transactions(15_000, 0x5eed_0015),
        &[Json, MessagePack],
    )?;
    write(&dir, "risk-batch", &risk_batch(), &[Json, Cbor])?;
    write(
        &dir,
        "user-profile",
        &user_profile(),
        &[Json, MessagePack, Cbor],
    )?;
    write(&dir, "order-graphql", &order_graphql(), &[Json, Cbor])?;
    write(
        &dir,
        "iot-metrics",
        &iot_metrics(),
        &[Json, MessagePack, Cbor],
    )?;
    write(
        &dir,
        "edge-cases",
        &Value::Map(edge_cases_msgpack()),
        &[MessagePack],
    )?;
    write(&dir, "edge-cases", &edge_cases_cbor(), &[Cbor])?;
    write(&dir, "orders-api", &orders_api(), &[Json])?;

    write_protobuf(
        &dir,
        "user-profile.proto",
        USER_PROFILE_PROTO,
        "wirelens.samples.UserProfile",
        &[("user-profile.pb", user_profile())],
    )?;
    write_protobuf(
        &dir,
        "orders-api.proto",
        ORDERS_API_PROTO,
        "wirelens.samples.OrderList",
        &[("orders-api.pb", orders_api())],
    )?;
    write_protobuf(
        &dir,
        "transactions.proto",
        TRANSACTIONS_PROTO,
        "wirelens.samples.TransactionHistory",
        &[("transactions-1k.pb", transactions(1_000, 0x5eed_0001))],
    )?;
    // A gRPC response body: three UserProfile messages, each behind its 5-byte frame prefix.
    let schema = Schema::from_proto_files(&[dir.join("user-profile.proto")], &[&dir])?;
    let options = EncodeOptions {
        message: Some(schema.message("wirelens.samples.UserProfile")?),
        ..EncodeOptions::default()
    };
    let mut body = Vec::new();
    for (id, name, roles) in [
        (10_042, "li_wei", vec!["admin", "editor"]),
        (10_043, "ana_sousa", vec!["viewer"]),
        (10_044, "kenji_sato", vec![]),
    ] {
        let user = Value::object([
            ("user_id", Value::Int(id)),
            ("username", Value::text(name)),
            (
                "email",
                Value::text(format!("{}@example.com", name.replace('_', "."))),
            ),
            ("is_active", Value::Bool(id != 10_044)),
            (
                "roles",
                Value::Array(roles.into_iter().map(Value::text).collect()),
            ),
            (
                "status",
                Value::text(if id == 10_044 { "suspended" } else { "active" }),
            ),
        ]);
        let enc = encode(&user, Format::Protobuf, &options)?;
        body.extend(grpc_frame(&enc.bytes, false));
    }
    std::fs::write(dir.join("user-profiles.grpc"), &body)?;
    println!("user-profiles.grpc ({} bytes, 3 frames)", body.len());
    Ok(())
}
