//! enginepb ChangeSet and TxnFileRefs protobuf decoding (the worker decodes both from
//! untrusted bodies); a decoded message re-encodes and decodes to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use rcop_proto::coprocessor::Request;
use rcop_proto::enginepb::{ChangeSet, TxnFileRefs};
use rcop_proto::tipb::DagRequest;

fn round_trip<M: Message + Default + PartialEq + std::fmt::Debug>(data: &[u8]) {
    if let Ok(m) = M::decode(data) {
        let again = M::decode(m.encode_to_vec().as_slice()).expect("re-encoded message decodes");
        assert_eq!(again, m);
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<ChangeSet>(data);
    round_trip::<TxnFileRefs>(data);
    round_trip::<Request>(data);
    round_trip::<DagRequest>(data);
});
