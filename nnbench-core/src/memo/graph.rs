//! Memos built from memos: what each memo's compute resolved, learnt as it
//! ran, so that the runner can keep an inner memo (a training split, a
//! trained model) while an outer one may still need it, and drop it once
//! none can.
//!
//! Edges are known per memo once it has been computed. For a memo not
//! computed yet the graph guesses by type: memos of one type are built from
//! the same kinds of memos (every `Quantized` from a `Trained`), so the
//! memos of the types its type was seen to resolve are kept for it.

use std::any::TypeId;
use std::collections::HashMap;

use super::ErasedMemo;

/// Which memos each computed memo resolved, and which types resolve which.
#[derive(Default)]
pub(crate) struct Graph {
    /// Per key hash of an outer memo: the memo and what its compute
    /// resolved, in first-resolve order.
    edges: HashMap<u64, Vec<Node>>,
    /// Memos some compute resolved (their key hashes, then identity).
    inner: HashMap<u64, Vec<Box<dyn ErasedMemo>>>,
    /// Type edges in first-seen order: (outer, inner, inner's name).
    types: Vec<(TypeId, TypeId, &'static str)>,
}

struct Node {
    memo: Box<dyn ErasedMemo>,
    inputs: Vec<Box<dyn ErasedMemo>>,
}

impl Graph {
    /// Notes that computing `outer` resolved `inner`.
    pub(crate) fn record(&mut self, outer: &dyn ErasedMemo, inner: &dyn ErasedMemo) {
        let node = self.node(outer);
        if !node.inputs.iter().any(|m| m.same_as(inner)) {
            node.inputs.push(inner.clone_boxed());
        }
        let bucket = self.inner.entry(inner.key_hash()).or_default();
        if !bucket.iter().any(|m| m.same_as(inner)) {
            bucket.push(inner.clone_boxed());
        }
        let edge = (outer.as_any().type_id(), inner.as_any().type_id());
        if !self.types.iter().any(|&(o, i, _)| (o, i) == edge) {
            self.types.push((edge.0, edge.1, inner.type_name()));
        }
    }

    /// Notes that `memo` has been computed or loaded, so that what it
    /// resolved (maybe nothing) is known.
    pub(crate) fn computed(&mut self, memo: &dyn ErasedMemo) {
        self.node(memo);
    }

    fn node(&mut self, memo: &dyn ErasedMemo) -> &mut Node {
        let bucket = self.edges.entry(memo.key_hash()).or_default();
        let at = match bucket.iter().position(|n| n.memo.same_as(memo)) {
            Some(at) => at,
            None => {
                bucket.push(Node {
                    memo: memo.clone_boxed(),
                    inputs: Vec::new(),
                });
                bucket.len() - 1
            }
        };
        &mut bucket[at]
    }

    /// What `memo`'s compute resolved, or `None` when it has not been
    /// computed in this process.
    pub(crate) fn inputs_of(&self, memo: &dyn ErasedMemo) -> Option<&[Box<dyn ErasedMemo>]> {
        self.edges
            .get(&memo.key_hash())?
            .iter()
            .find(|n| n.memo.same_as(memo))
            .map(|n| n.inputs.as_slice())
    }

    /// Whether no compute has resolved a memo: the cache's memos are all
    /// leaves, and nothing is kept for another.
    pub(crate) fn is_flat(&self) -> bool {
        self.inner.is_empty()
    }

    /// Whether some memo's compute resolved `memo`.
    pub(crate) fn is_inner(&self, memo: &dyn ErasedMemo) -> bool {
        self.inner
            .get(&memo.key_hash())
            .is_some_and(|b| b.iter().any(|m| m.same_as(memo)))
    }

    /// Whether some memo's compute resolved a memo of `memo`'s type: a
    /// memo not computed yet of the outer type may resolve this one.
    pub(crate) fn is_input_type(&self, memo: &dyn ErasedMemo) -> bool {
        let kind = memo.as_any().type_id();
        self.types.iter().any(|&(_, inner, _)| inner == kind)
    }

    /// The types memos of type `outer` may be built from: those its memos
    /// resolved, and theirs, transitively.
    pub(crate) fn types_under(&self, outer: TypeId) -> Vec<TypeId> {
        let mut found: Vec<TypeId> = Vec::new();
        let mut frontier = vec![outer];
        while let Some(at) = frontier.pop() {
            for &(o, i, _) in &self.types {
                if o == at && i != outer && !found.contains(&i) {
                    found.push(i);
                    frontier.push(i);
                }
            }
        }
        found
    }

    /// The names of the types memos of type `outer` resolved directly.
    pub(crate) fn built_from(&self, outer: TypeId) -> Vec<&'static str> {
        self.types
            .iter()
            .filter(|&&(o, _, _)| o == outer)
            .map(|&(_, _, name)| name)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::memo::test_memos::{Data, Model, Small};

    #[test]
    fn inputs_are_known_once_computed_and_types_reach_through_the_chain() {
        let mut graph = Graph::default();
        assert!(graph.inputs_of(&Small(1)).is_none());
        graph.record(&Small(1), &Model(1));
        graph.record(&Small(1), &Model(1));
        graph.record(&Model(1), &Data(0));
        graph.computed(&Data(0));
        graph.computed(&Model(1));
        graph.computed(&Small(1));

        let inputs: Vec<String> = graph
            .inputs_of(&Small(1))
            .unwrap()
            .iter()
            .map(|m| m.describe())
            .collect();
        assert_eq!(inputs, ["Model(1)"]);
        assert!(graph.inputs_of(&Data(0)).unwrap().is_empty());
        assert!(graph.inputs_of(&Small(2)).is_none());

        assert!(graph.is_inner(&Model(1)) && graph.is_inner(&Data(0)));
        assert!(!graph.is_inner(&Small(1)) && !graph.is_inner(&Model(2)));
        assert!(graph.is_input_type(&Model(2)) && !graph.is_input_type(&Small(1)));

        let under = graph.types_under(TypeId::of::<Small>());
        assert_eq!(under, [TypeId::of::<Model>(), TypeId::of::<Data>()]);
        assert!(graph.types_under(TypeId::of::<Data>()).is_empty());
        assert_eq!(graph.built_from(TypeId::of::<Small>()).len(), 1);
        assert!(graph.built_from(TypeId::of::<Small>())[0].ends_with("Model"));
    }
}
