//! TLS for the simulator, as every real apiserver has: a CA and a serving
//! certificate made fresh for each run (clients such as kubectl refuse to
//! send bearer tokens over plain HTTP). The CA goes into the kubeconfig.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

/// A serving identity and the CA that clients should trust.
pub struct ServingCert {
    pub ca_pem: String,
    pub acceptor: TlsAcceptor,
}

pub fn generate() -> Result<ServingCert, String> {
    let fail =
        |e: &dyn std::fmt::Display| format!("cannot create the simulator's TLS certificate: {e}");
    let ca_key = KeyPair::generate().map_err(|e| fail(&e))?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| fail(&e))?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "podbay-sim-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key).map_err(|e| fail(&e))?;

    let key = KeyPair::generate().map_err(|e| fail(&e))?;
    let mut params =
        CertificateParams::new(vec!["localhost".to_string(), "kubernetes".to_string()])
            .map_err(|e| fail(&e))?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V6(Ipv6Addr::LOCALHOST)));
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let cert = params.signed_by(&key, &ca).map_err(|e| fail(&e))?;

    let private_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(&e))?
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone(), ca.der().clone()], private_key)
        .map_err(|e| fail(&e))?;
    let mut config = config;
    // HTTP/1.1 only: WebSocket upgrades need it, and every client speaks it.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(ServingCert {
        ca_pem: ca.pem(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}
