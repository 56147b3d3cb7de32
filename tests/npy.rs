//! A hostile `.npy` file fails its case with a message naming the file; the
//! run, and the process, go on.

use std::path::PathBuf;
use std::sync::OnceLock;

use ndarray::Array1;
use nnbench::{Memo, Runner};

/// A folder with a valid file and a 136-byte file whose header declares
/// 2^40 float64 elements.
fn files() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile-npy");
        std::fs::create_dir_all(&dir).unwrap();
        nnbench::npy::write(dir.join("good.npy"), &Array1::from(vec![1.0f64, 2.0, 3.0])).unwrap();
        let mut header =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }".to_owned();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend([0u8; 8]);
        std::fs::write(dir.join("hostile.npy"), bytes).unwrap();
        dir
    })
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Vector(&'static str);

impl Memo for Vector {
    type Value = Array1<f64>;
    fn compute(&self) -> nnbench::Result<Array1<f64>> {
        Ok(nnbench::npy::read(files().join(self.0))?)
    }
}

#[nnbench::product(v = [Vector("hostile.npy"), Vector("good.npy"), Vector("missing.npy")])]
fn vector_sum(v: &Array1<f64>) -> f64 {
    v.sum()
}

#[test]
fn a_hostile_file_fails_only_its_own_case_and_names_the_file() {
    let record = Runner::new()
        .filter("vector_sum/")
        .quiet(true)
        .test_mode(true)
        .run()
        .unwrap();
    assert_eq!(record.cases.len(), 3);

    let hostile = record.case("vector_sum/v=Vector(\"hostile.npy\")").unwrap();
    let error = hostile.error.as_ref().expect("the hostile case fails");
    let cause = error.causes.join(" ");
    assert!(
        cause.contains(&files().join("hostile.npy").display().to_string()),
        "{cause}"
    );
    assert!(cause.contains("truncated"), "{cause}");

    let good = record.case("vector_sum/v=Vector(\"good.npy\")").unwrap();
    assert_eq!(good.value, 6.0);

    let missing = record.case("vector_sum/v=Vector(\"missing.npy\")").unwrap();
    assert!(
        missing
            .error
            .as_ref()
            .unwrap()
            .summary()
            .contains("missing.npy")
    );
}
