// Figures and directions can gain variants in a minor release (a new
// figure to gate on): a user's match on them has an arm for the others.
use nnbench::record::{Direction, Figure};

fn unit(figure: Figure) -> &'static str {
    match figure {
        Figure::Time | Figure::P99 => "ns",
        Figure::Rss | Figure::Heap | Figure::Gpu | Figure::Peak | Figure::Memo => "bytes",
        Figure::Load => "ns",
        Figure::Value | Figure::Instructions | Figure::Throughput | Figure::Requests => "",
        Figure::MaxRate | Figure::Scaling | Figure::Capacity => "",
    }
}

fn better(direction: Direction) -> &'static str {
    match direction {
        Direction::Higher => "more",
        Direction::Lower => "less",
    }
}

fn main() {
    let _ = (unit(Figure::Time), better(Direction::Higher));
}
