//! Caps the connections one IP address may hold, counting those still handshaking, so that one
//! host opening sockets without end cannot starve everyone else of the relay.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::IpAddr;
use std::task::{Context, Poll};

use libp2p::{
    core::{transport::PortUse, Endpoint},
    multiaddr::Protocol,
    swarm::{
        dummy, ConnectionClosed, ConnectionDenied, ConnectionId, FromSwarm, ListenFailure,
        NetworkBehaviour, THandler, THandlerInEvent, THandlerOutEvent, ToSwarm,
    },
    Multiaddr, PeerId,
};

/// Why a connection was refused.
#[derive(Debug, thiserror::Error)]
#[error("{ip} already holds {limit} connections")]
pub struct IpLimitExceeded {
    pub ip: IpAddr,
    pub limit: usize,
}

pub struct IpLimits {
    limit: usize,
    ip_of: HashMap<ConnectionId, IpAddr>,
    per_ip: HashMap<IpAddr, usize>,
}

impl IpLimits {
    pub fn new(limit: usize) -> Self {
        Self { limit, ip_of: HashMap::new(), per_ip: HashMap::new() }
    }

    fn admit(&mut self, id: ConnectionId, remote: &Multiaddr) -> Result<(), ConnectionDenied> {
        let Some(ip) = ip_of(remote) else { return Ok(()) };
        if self.ip_of.contains_key(&id) {
            return Ok(());
        }
        let count = self.per_ip.entry(ip).or_default();
        if *count >= self.limit {
            return Err(ConnectionDenied::new(IpLimitExceeded { ip, limit: self.limit }));
        }
        *count += 1;
        self.ip_of.insert(id, ip);
        Ok(())
    }

    fn release(&mut self, id: ConnectionId) {
        let Some(ip) = self.ip_of.remove(&id) else { return };
        if let Some(count) = self.per_ip.get_mut(&ip) {
            *count -= 1;
            if *count == 0 {
                self.per_ip.remove(&ip);
            }
        }
    }
}

fn ip_of(addr: &Multiaddr) -> Option<IpAddr> {
    addr.iter().find_map(|p| match p {
        Protocol::Ip4(ip) => Some(IpAddr::V4(ip)),
        Protocol::Ip6(ip) => Some(IpAddr::V6(ip)),
        _ => None,
    })
}

impl NetworkBehaviour for IpLimits {
    type ConnectionHandler = dummy::ConnectionHandler;
    type ToSwarm = Infallible;

    fn handle_pending_inbound_connection(
        &mut self,
        id: ConnectionId,
        _local: &Multiaddr,
        remote: &Multiaddr,
    ) -> Result<(), ConnectionDenied> {
        self.admit(id, remote)
    }

    fn handle_established_inbound_connection(
        &mut self,
        id: ConnectionId,
        _peer: PeerId,
        _local: &Multiaddr,
        remote: &Multiaddr,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        self.admit(id, remote)?;
        Ok(dummy::ConnectionHandler)
    }

    fn handle_established_outbound_connection(
        &mut self,
        _id: ConnectionId,
        _peer: PeerId,
        _addr: &Multiaddr,
        _role: Endpoint,
        _port_use: PortUse,
    ) -> Result<THandler<Self>, ConnectionDenied> {
        Ok(dummy::ConnectionHandler)
    }

    fn on_swarm_event(&mut self, event: FromSwarm) {
        match event {
            FromSwarm::ConnectionClosed(ConnectionClosed { connection_id, .. })
            | FromSwarm::ListenFailure(ListenFailure { connection_id, .. }) => {
                self.release(connection_id)
            }
            _ => {}
        }
    }

    fn on_connection_handler_event(
        &mut self,
        _peer: PeerId,
        _id: ConnectionId,
        event: THandlerOutEvent<Self>,
    ) {
        match event {}
    }

    fn poll(&mut self, _: &mut Context<'_>) -> Poll<ToSwarm<Self::ToSwarm, THandlerInEvent<Self>>> {
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(ip: &str) -> Multiaddr {
        format!("/ip4/{ip}/tcp/1234").parse().unwrap()
    }

    #[test]
    fn an_ip_at_its_limit_is_refused_until_a_connection_goes() {
        let mut limits = IpLimits::new(2);
        let (a, b, c) = (
            ConnectionId::new_unchecked(1),
            ConnectionId::new_unchecked(2),
            ConnectionId::new_unchecked(3),
        );
        limits.admit(a, &addr("10.0.0.1")).unwrap();
        limits.admit(b, &addr("10.0.0.1")).unwrap();
        assert!(limits.admit(c, &addr("10.0.0.1")).is_err());
        limits.admit(c, &addr("10.0.0.2")).unwrap();
        limits.release(a);
        limits.admit(ConnectionId::new_unchecked(4), &addr("10.0.0.1")).unwrap();
    }

    #[test]
    fn the_pending_connection_is_not_counted_twice_when_established() {
        let mut limits = IpLimits::new(1);
        let id = ConnectionId::new_unchecked(1);
        limits.admit(id, &addr("10.0.0.1")).unwrap();
        limits.admit(id, &addr("10.0.0.1")).unwrap();
        limits.release(id);
        assert!(limits.per_ip.is_empty());
    }
}
