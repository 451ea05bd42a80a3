//! The relay's persistent identity: its libp2p key and its WebRTC certificate live in the data
//! directory, so the peer id and the certhash that browsers dial stay the same across restarts.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use libp2p::identity::Keypair;
use libp2p_webrtc::tokio::Certificate;

const KEY_FILE: &str = "identity.key";
const CERT_FILE: &str = "webrtc-cert.pem";

pub struct Identity {
    pub keypair: Keypair,
    pub certificate: Certificate,
}

/// Loads the identity from `dir`, creating the directory and a new identity on first use.
pub fn load_or_create(dir: &Path) -> Result<Identity> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create data directory {}", dir.display()))?;
    Ok(Identity { keypair: keypair(dir)?, certificate: certificate(dir)? })
}

/// The libp2p key in `dir`, made on first use: the relay's, and each native peer's own.
pub fn keypair(dir: &Path) -> Result<Keypair> {
    let path = dir.join(KEY_FILE);
    if path.exists() {
        let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        return Keypair::from_protobuf_encoding(&bytes).with_context(|| {
            format!("{} is not a libp2p key: delete it to make a new identity", path.display())
        });
    }
    let keypair = Keypair::generate_ed25519();
    let bytes = keypair.to_protobuf_encoding().context("cannot encode the new key")?;
    write_private(&path, &bytes)?;
    Ok(keypair)
}

fn certificate(dir: &Path) -> Result<Certificate> {
    let path = dir.join(CERT_FILE);
    if path.exists() {
        let pem =
            fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        return Certificate::from_pem(&pem).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a certificate ({e}): delete it to make a new one",
                path.display()
            )
        });
    }
    let certificate = Certificate::generate(&mut rand::rng())
        .map_err(|e| anyhow::anyhow!("cannot generate a WebRTC certificate: {e}"))?;
    write_private(&path, certificate.serialize_pem().as_bytes())?;
    Ok(certificate)
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot restrict permissions of {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_survives_a_reload() {
        let dir = std::env::temp_dir().join(format!("syncscope-identity-{}", std::process::id()));
        let first = load_or_create(&dir).unwrap();
        let second = load_or_create(&dir).unwrap();
        assert_eq!(first.keypair.public().to_peer_id(), second.keypair.public().to_peer_id());
        assert_eq!(first.certificate.fingerprint(), second.certificate.fingerprint());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_corrupt_key_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("syncscope-badkey-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(KEY_FILE), b"not a key").unwrap();
        let err = load_or_create(&dir).err().unwrap().to_string();
        assert!(err.contains("is not a libp2p key"), "{err}");
        fs::remove_dir_all(dir).unwrap();
    }
}
