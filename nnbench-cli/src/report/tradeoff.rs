//! The trade-off of a family with a struct metric: each judged field
//! against time per call, one point per case, the latest run beside the
//! commit before it, the latest run's Pareto front, and the cases that
//! were on the earlier front and are no longer.

use std::collections::BTreeMap;

use nnbench_vocab::{Direction, Unit};

use super::scatter::{Scatter, Spot};

/// How many fields of one family get a chart.
const MOST_FIELDS: usize = 4;

/// A point of a chart: time per call, a field.
type Xy = (f64, f64);

/// A case's time per call and its struct metric's fields, in one run.
pub(super) struct Figures {
    pub time_ns: f64,
    pub fields: BTreeMap<String, f64>,
}

/// A case of the family, where the latest run and the commit before put it.
pub(super) struct Member {
    pub name: String,
    pub colour: usize,
    pub now: Option<Figures>,
    pub before: Option<Figures>,
}

/// One chart per directed field (the first few, by name) that some case of
/// the latest run has a figure of. `before` names the earlier commit.
pub(super) fn charts(
    family: &str,
    directions: &BTreeMap<String, Direction>,
    members: &[Member],
    before: Option<&str>,
) -> Vec<Scatter> {
    directions
        .iter()
        .filter_map(|(field, &direction)| chart(family, field, direction, members, before))
        .take(MOST_FIELDS)
        .collect()
}

fn chart(
    family: &str,
    field: &str,
    direction: Direction,
    members: &[Member],
    before: Option<&str>,
) -> Option<Scatter> {
    let point = |figures: &Figures| Some((figures.time_ns, *figures.fields.get(field)?));
    // Each member drawn, where it is now and where it was.
    let drawn: Vec<(&Member, Xy, Option<Xy>)> = members
        .iter()
        .filter_map(|m| {
            let now = point(m.now.as_ref()?)?;
            Some((m, now, m.before.as_ref().and_then(point)))
        })
        .filter(|(_, now, _)| now.0.is_finite() && now.1.is_finite())
        .collect();
    if drawn.is_empty() {
        return None;
    }
    let now_front = on_front(&drawn.iter().map(|d| d.1).collect::<Vec<_>>(), direction);
    // The earlier front, of the cases the earlier commit had.
    let earlier: Vec<(usize, (f64, f64))> = drawn
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i, d.2?)))
        .collect();
    let earlier_front = on_front(&earlier.iter().map(|e| e.1).collect::<Vec<_>>(), direction);
    let was_on: Vec<usize> = earlier
        .iter()
        .zip(&earlier_front)
        .filter(|(_, on)| **on)
        .map(|(e, _)| e.0)
        .collect();
    let spots = drawn
        .iter()
        .enumerate()
        .map(|(i, (member, now, before))| Spot {
            name: member.name.clone(),
            colour: member.colour,
            now: *now,
            before: *before,
            on_front: now_front[i],
            left_front: was_on.contains(&i) && !now_front[i],
        })
        .collect();
    Some(Scatter {
        title: format!(
            "{family}: {field} ({} is better) against time per call",
            direction.name()
        ),
        x_name: "time per call".into(),
        x_unit: Unit::Time,
        y_name: field.to_owned(),
        spots,
        before: before.map(str::to_owned),
    })
}

/// Which of `points` (time per call, a field better in `direction`) are on
/// their Pareto front: no other point is as fast and as good, and faster or
/// better. Points that are equal are on it together.
pub(super) fn on_front(points: &[(f64, f64)], direction: Direction) -> Vec<bool> {
    let better = |a: f64, b: f64| direction.improves(b, a);
    let mut order: Vec<usize> = (0..points.len()).collect();
    // Fastest first and, among equally fast points, the best first: a
    // point is on the front when it is better than every faster one.
    order.sort_by(|&a, &b| {
        let (pa, pb) = (points[a], points[b]);
        pa.0.total_cmp(&pb.0).then_with(|| {
            if better(pa.1, pb.1) {
                std::cmp::Ordering::Less
            } else if better(pb.1, pa.1) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    let mut on = vec![false; points.len()];
    let mut best: Option<(f64, f64)> = None;
    for i in order {
        let point = points[i];
        let joins = match best {
            None => true,
            Some(b) => better(point.1, b.1) || point == b,
        };
        if joins {
            on[i] = true;
            if best.is_none_or(|b| better(point.1, b.1)) {
                best = Some(point);
            }
        }
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_holds_what_nothing_beats() {
        // (time, accuracy): c is slower and worse than b.
        let points = [(1.0, 0.80), (2.0, 0.85), (3.0, 0.84), (4.0, 0.90)];
        assert_eq!(
            on_front(&points, Direction::Higher),
            [true, true, false, true]
        );
        // A loss: lower is better; as fast and as good counts once each.
        let losses = [(1.0, 0.5), (1.0, 0.5), (1.0, 0.6), (2.0, 0.5), (3.0, 0.2)];
        assert_eq!(
            on_front(&losses, Direction::Lower),
            [true, true, false, false, true]
        );
        assert!(on_front(&[], Direction::Lower).is_empty());
    }

    fn member(name: &str, now: (f64, f64), before: (f64, f64)) -> Member {
        let figures = |(time_ns, accuracy): (f64, f64)| Figures {
            time_ns,
            fields: BTreeMap::from([("accuracy".to_owned(), accuracy), ("loss".to_owned(), 1.0)]),
        };
        Member {
            name: name.into(),
            colour: 0,
            now: Some(figures(now)),
            before: Some(figures(before)),
        }
    }

    #[test]
    fn a_case_beaten_since_the_commit_before_has_left_the_front() {
        let members = [
            member("small", (1.0, 0.80), (1.0, 0.80)),
            member("medium", (2.0, 0.79), (2.0, 0.85)),
            member("large", (4.0, 0.90), (4.0, 0.90)),
        ];
        let directions = BTreeMap::from([("accuracy".to_owned(), Direction::Higher)]);
        let charts = charts("m", &directions, &members, Some("commit 1"));
        assert_eq!(charts.len(), 1, "the undirected loss has no chart");
        let spots = &charts[0].spots;
        let left: Vec<&str> = spots
            .iter()
            .filter(|s| s.left_front)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(left, ["medium"]);
        assert_eq!(spots.iter().filter(|s| s.on_front).count(), 2);
        assert!(charts[0].title.contains("accuracy (higher is better)"));
    }
}
