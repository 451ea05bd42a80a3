//! How the simulator names its nodes.

/// A node of the simulated network: an index into [`Network::nodes`](crate::Network::nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
