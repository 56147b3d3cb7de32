use std::marker::PhantomData;
use std::rc::Rc;

/// Serializes as a number, but cannot leave the thread it was made on.
#[derive(serde::Serialize)]
struct Local {
    value: u8,
    #[serde(skip)]
    here: PhantomData<Rc<()>>,
}

#[nnbench::benchmark(threads = [2])]
fn returns_local() -> Local {
    Local {
        value: 1,
        here: PhantomData,
    }
}

fn main() {}
