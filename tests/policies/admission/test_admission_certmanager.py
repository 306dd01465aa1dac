"""cert-manager's validating webhook (policies/admission/certmanager/) against cert-manager v1.21.1's
own table tests, transcribed from Go structs into the JSON the API server sends (same names, values and
expected field errors):

- internal/apis/certmanager/validation/certificate_test.go `TestValidateCertificate` (the scenarios on the
  fields reproduced) and `TestValidateDuration` (every scenario; the `usefulDurations` as Go duration
  strings);
- internal/apis/certmanager/validation/issuer_test.go `TestValidateIssuerSpec`, `TestValidateACMEIssuerConfig`
  and `TestValidateACMEIssuerHTTP01Config` (the scenarios on ACME, CA and self-signed issuers).

Upstream calls the issuer validators with a nil field path; the webhook calls them under `spec`
(ValidateIssuerSpec(&iss.Spec, field.NewPath("spec"))), so the expected paths here carry the `spec.` (and,
for the ACME and HTTP-01 validators, `spec.acme.` / `spec.acme.solvers[0].http01.`) prefix the webhook gives.
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.admission import certmanager as cm
from policies.rules import apimachinery

VALID_ISSUER_REF = {"name": "name", "kind": "ClusterIssuer"}
DNS1123 = apimachinery.DNS1123_SUBDOMAIN_ERROR


def cert(**spec: Any) -> dict[str, Any]:
    return {"commonName": "testcn", "secretName": "abc", "issuerRef": VALID_ISSUER_REF, **spec}


# (scenario name as upstream names it, spec, expected errors as the webhook prints them)
CERTIFICATES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("valid basic certificate", cert(), []),
    ("valid with blank issuerRef kind and no group", cert(issuerRef={"name": "valid"}), []),
    ("valid with 'Issuer' issuerRef kind and no group", cert(issuerRef={"name": "valid", "kind": "Issuer"}), []),
    ("valid with org set", cert(subject={"organizations": ["testorg"]}), []),
    (
        "valid with 'Issuer' issuerRef kind and explicit internal group",
        cert(issuerRef={"name": "valid", "kind": "Issuer", "group": "cert-manager.io"}),
        [],
    ),
    (
        "invalid with external issuerRef kind and empty group",
        cert(issuerRef={"name": "abc", "kind": "AWSPCAClusterIssuer"}),
        [
            'spec.issuerRef.kind: Invalid value: "AWSPCAClusterIssuer": must be one of Issuer or ClusterIssuer '
            "(did you forget to set spec.issuerRef.kind.group?)"
        ],
    ),
    (
        "valid with external issuerRef kind and external group",
        cert(issuerRef={"name": "abc", "kind": "AWSPCAClusterIssuer", "group": "awspca.cert-manager.io"}),
        [],
    ),
    (
        "certificate missing secretName",
        {"commonName": "testcn", "issuerRef": VALID_ISSUER_REF},
        ["spec.secretName: Required value: must be specified"],
    ),
    ("certificate invalid secretName", cert(secretName="testFoo"), [f'spec.secretName: Invalid value: "testFoo": {DNS1123}']),
    (
        "certificate with no domains, URIs or common name",
        {"secretName": "abc", "issuerRef": VALID_ISSUER_REF},
        [
            'spec: Invalid value: "": at least one of commonName (from the commonName field or from a literalSubject), '
            "dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set"
        ],
    ),
    (
        "invalid with no issuerRef",
        {"commonName": "testcn", "secretName": "abc"},
        ["spec.issuerRef.name: Required value: must be specified"],
    ),
    (
        "valid certificate with only dnsNames",
        {"dnsNames": ["validdnsname"], "secretName": "abc", "issuerRef": VALID_ISSUER_REF},
        [],
    ),
    ("valid certificate with rsa keyAlgorithm specified and no keySize", cert(privateKey={"algorithm": "RSA"}), []),
    (
        "valid certificate with rsa keyAlgorithm specified with keySize 2048",
        cert(privateKey={"algorithm": "RSA", "size": 2048}),
        [],
    ),
    (
        "valid certificate with rsa keyAlgorithm specified with keySize 4096",
        cert(privateKey={"algorithm": "RSA", "size": 4096}),
        [],
    ),
    (
        "valid certificate with rsa keyAlgorithm specified with keySize 8192",
        cert(privateKey={"algorithm": "RSA", "size": 8192}),
        [],
    ),
    ("valid certificate with ecdsa keyAlgorithm specified and no keySize", cert(privateKey={"algorithm": "ECDSA"}), []),
    (
        "valid certificate with ecdsa keyAlgorithm specified with keySize 256",
        cert(privateKey={"algorithm": "ECDSA", "size": 256}),
        [],
    ),
    (
        "valid certificate with ecdsa keyAlgorithm specified with keySize 384",
        cert(privateKey={"algorithm": "ECDSA", "size": 384}),
        [],
    ),
    (
        "valid certificate with ecdsa keyAlgorithm specified with keySize 521",
        cert(privateKey={"algorithm": "ECDSA", "size": 521}),
        [],
    ),
    ("valid certificate with ed25519 keyAlgorithm", cert(privateKey={"algorithm": "Ed25519", "size": 521}), []),
    ("valid certificate with keyAlgorithm not specified and keySize specified", cert(privateKey={"size": 2048}), []),
    (
        "certificate with rsa keyAlgorithm specified and invalid keysize 1024",
        cert(privateKey={"algorithm": "RSA", "size": 1024}),
        ["spec.privateKey.size: Invalid value: 1024: must be between 2048 and 8192 for rsa keyAlgorithm"],
    ),
    (
        "certificate with rsa keyAlgorithm specified and invalid keysize 8196",
        cert(privateKey={"algorithm": "RSA", "size": 8196}),
        ["spec.privateKey.size: Invalid value: 8196: must be between 2048 and 8192 for rsa keyAlgorithm"],
    ),
    (
        "certificate with ecdsa keyAlgorithm specified and invalid keysize",
        cert(privateKey={"algorithm": "ECDSA", "size": 100}),
        ['spec.privateKey.size: Unsupported value: 100: supported values: "256", "384", "521"'],
    ),
    (
        "certificate with invalid keyAlgorithm",
        cert(privateKey={"algorithm": "blah"}),
        ['spec.privateKey.algorithm: Invalid value: "blah": must be either empty or one of rsa, ecdsa or ed25519'],
    ),
    ("valid certificate with ipAddresses", cert(ipAddresses=["127.0.0.1"]), []),
    (
        "certificate with invalid ipAddresses",
        cert(ipAddresses=["blah"]),
        ['spec.ipAddresses[0]: Invalid value: "blah": invalid IP address'],
    ),
    (
        "valid certificate with commonName exactly 64 bytes",
        cert(commonName="this-is-a-big-long-string-which-is-exactly-sixty-four-characters"),
        [],
    ),
    (
        "invalid certificate with commonName longer than 64 bytes",
        cert(commonName="this-is-a-big-long-string-which-has-exactly-sixty-five-characters"),
        ["spec.commonName: Too long: may not be more than 64 bytes"],
    ),
    (
        "valid certificate with no commonName and second dnsName longer than 64 bytes",
        {
            "secretName": "abc",
            "issuerRef": VALID_ISSUER_REF,
            "dnsNames": ["dnsName", "this-is-a-big-long-string-which-has-exactly-sixty-five-characters"],
        },
        [],
    ),
    (
        "valid certificate with commonName and first dnsName longer than 64 bytes",
        cert(dnsNames=["this-is-a-big-long-string-which-has-exactly-sixty-five-characters", "dnsName"]),
        [],
    ),
    ("valid certificate with basic keyusage", cert(usages=["signing"]), []),
    ("valid certificate with multiple keyusage", cert(usages=["signing", "s/mime"]), []),
    (
        "invalid certificate with nonexistent keyusage",
        cert(usages=["nonexistent"]),
        ['spec.usages[0]: Invalid value: "nonexistent": unknown keyusage'],
    ),
    ("valid certificate with only URI SAN name", {"uris": ["foo.bar"], "secretName": "abc", "issuerRef": VALID_ISSUER_REF}, []),
    (
        "valid certificate with only email SAN",
        {"emailAddresses": ["alice@example.com"], "secretName": "abc", "issuerRef": VALID_ISSUER_REF},
        [],
    ),
    ("valid with empty secretTemplate", cert(secretTemplate={}), []),
    (
        "valid with 'CertificateSecretTemplate' labels and annotations",
        cert(
            secretTemplate={"annotations": {"my-annotation.com/foo": "app=bar"}, "labels": {"my-label.com/foo": "evn-production"}}
        ),
        [],
    ),
    (
        "invalid with disallowed 'CertificateSecretTemplate' annotations",
        cert(
            secretTemplate={
                "annotations": {
                    "app.com/valid": "valid",
                    "cert-manager.io/alt-names": "example.com",
                    "cert-manager.io/certificate-name": "selfsigned-cert",
                    "cert-manager.io/allow-direct-injection": "true",
                }
            }
        ),
        [
            'spec.secretTemplate.annotations: Invalid value: "cert-manager.io/alt-names": cert-manager.io/* annotations are not allowed',
            'spec.secretTemplate.annotations: Invalid value: "cert-manager.io/certificate-name": cert-manager.io/* annotations are not allowed',
        ],
    ),
]


@pytest.mark.parametrize(("scenario", "spec", "expected"), CERTIFICATES, ids=[c[0] for c in CERTIFICATES])
def test_certificate_table(scenario: str, spec: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in cm.validate_certificate(spec)] == expected


# TestValidateDuration's usefulDurations, as Go duration strings.
D = {
    "one second": "1s",
    "ten minutes": "10m",
    "half hour": "30m",
    "one hour": "1h",
    "one month": "720h",
    "half year": "4320h",
    "one year": "8760h",
    "ten years": "87600h",
}
MUTUALLY_EXCLUSIVE = "renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set"
DURATIONS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("default duration and renewBefore", {}, []),
    ("valid duration and renewBefore", {"duration": D["one year"], "renewBefore": D["half year"]}, []),
    ("unset duration, valid renewBefore for default", {"renewBefore": D["one month"]}, []),
    ("unset renewBefore, valid duration for default", {"duration": D["one year"]}, []),
    (
        "renewBefore is bigger than the default duration",
        {"renewBefore": D["ten years"]},
        [
            "spec.renewBefore: Invalid value: 87600h0m0s: certificate duration 2160h0m0s must be greater than renewBefore 87600h0m0s"
        ],
    ),
    (
        "renewBefore is bigger than the duration",
        {"duration": D["one month"], "renewBefore": D["one year"]},
        ["spec.renewBefore: Invalid value: 8760h0m0s: certificate duration 720h0m0s must be greater than renewBefore 8760h0m0s"],
    ),
    (
        "renewBefore is less than the minimum permitted value",
        {"renewBefore": D["one second"]},
        ["spec.renewBefore: Invalid value: 1s: certificate renewBefore must be greater than 5m0s"],
    ),
    (
        "renewBefore and renewBeforePercentage both set",
        {"renewBefore": D["one month"], "renewBeforePercentage": 95},
        [
            f"spec.renewBefore: Invalid value: 720h0m0s: {MUTUALLY_EXCLUSIVE}",
            f"spec.renewBeforePercentage: Invalid value: 95: {MUTUALLY_EXCLUSIVE}",
        ],
    ),
    ("valid duration and renewBeforePercentage", {"duration": D["one year"], "renewBeforePercentage": 95}, []),
    ("unset duration, valid renewBeforePercentage for default", {"renewBeforePercentage": 95}, []),
    (
        "renewBeforePercentage is equal to duration",
        {"renewBeforePercentage": 0},
        [
            "spec.renewBeforePercentage: Invalid value: 0: certificate renewBeforePercentage must result in a renewBefore less than duration"
        ],
    ),
    (
        "renewBeforePercentage results in less than the minimum permitted value",
        {"renewBeforePercentage": 100},
        [
            "spec.renewBeforePercentage: Invalid value: 100: certificate renewBeforePercentage must result in a renewBefore greater than 5m0s"
        ],
    ),
    (
        "duration is less than the minimum permitted value",
        {"duration": D["half hour"], "renewBefore": D["ten minutes"]},
        ["spec.duration: Invalid value: 30m0s: certificate duration must be greater than 1h0m0s"],
    ),
    (
        "renewBeforePercentage=1 with 10-year duration does not overflow int64",
        {"duration": D["ten years"], "renewBeforePercentage": 1},
        [],
    ),
    (
        "renewBeforePercentage=1 with 3-year duration does not overflow int64",
        {"duration": "26280h", "renewBeforePercentage": 1},
        [],
    ),
]


@pytest.mark.parametrize(("scenario", "fields", "expected"), DURATIONS, ids=[c[0] for c in DURATIONS])
def test_duration_table(scenario: str, fields: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in cm.validate_duration(cert(**fields))] == expected
    if "duration" in fields or "renewBefore" in fields:  # the whole spec runs ValidateDuration only then
        assert [str(e) for e in cm.validate_certificate(cert(**fields))] == expected


def test_percentage_without_duration_is_not_validated_by_the_webhook() -> None:
    # ValidateCertificateSpec: `if crt.Duration != nil || crt.RenewBefore != nil { ValidateDuration }`.
    assert cm.validate_certificate(cert(renewBeforePercentage=100)) == []


def test_an_undecodable_duration_refuses_the_object() -> None:
    obj = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "spec": cert(renewBefore="15 days")}
    message = cm.refusal(obj)
    assert message is not None and 'time: unknown unit " days" in duration "15 days"' in message


# --- issuers ------------------------------------------------------------------------------------------

VALID_ACME = {"email": "valid-email", "server": "valid-server", "privateKeySecretRef": {"name": "valid", "key": "validkey"}}
ISSUERS: list[tuple[str, dict[str, Any], list[str]]] = [
    # TestValidateIssuerSpec
    ("valid ca issuer", {"ca": {"secretName": "valid"}}, []),
    ("ca issuer without secret name specified", {"ca": {}}, ["spec.ca.secretName: Required value"]),
    ("valid self-signed issuer", {"selfSigned": {}}, []),
    ("valid acme issuer", {"acme": VALID_ACME}, []),
    ("missing issuer config", {}, ["spec: Required value: at least one issuer must be configured"]),
    (
        "multiple issuers configured",
        {"selfSigned": {}, "ca": {"secretName": "valid"}},
        ["spec.selfSigned: Forbidden: may not specify more than one issuer type"],
    ),
    ("valid ocsp url", {"ca": {"secretName": "valid", "ocspServers": ["http://ocsp.int-x3.letsencrypt.org"]}}, []),
    (
        "invalid ocsp url",
        {"ca": {"secretName": "valid", "ocspServers": [""]}},
        ['spec.ca.ocspServer[0]: Invalid value: "": must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org'],
    ),
    (
        "valid IssuingCertificateURLs",
        {"ca": {"secretName": "valid", "issuingCertificateURLs": ["http://ca.example.com/ca.crt"]}},
        [],
    ),
    (
        "invalid IssuingCertificateURLs",
        {"ca": {"secretName": "valid", "issuingCertificateURLs": [""]}},
        ['spec.ca.issuingCertificateURLs[0]: Invalid value: "": must be a valid URL'],
    ),
    # TestValidateACMEIssuerConfig
    (
        "acme issuer with missing fields",
        {"acme": {}},
        [
            "spec.acme.privateKeySecretRef.name: Required value: private key secret name is a required field",
            "spec.acme.server: Required value: acme server URL is a required field",
        ],
    ),
    (
        "acme solver without any config",
        {"acme": {**VALID_ACME, "solvers": [{}]}},
        ["spec.acme.solvers[0]: Required value: no solver type configured"],
    ),
    (
        "acme solver with missing http01 config type",
        {"acme": {**VALID_ACME, "solvers": [{"http01": {}}]}},
        ["spec.acme.solvers[0].http01: Required value: no HTTP01 solver type configured"],
    ),
    ("acme solver with valid http01 ingress config", {"acme": {**VALID_ACME, "solvers": [{"http01": {"ingress": {}}}]}}, []),
    (
        "acme solver with invalid http01 gateway config",
        {"acme": {**VALID_ACME, "solvers": [{"http01": {"gatewayHTTPRoute": {"parentRefs": [{"kind": "Gateway"}]}}}]}},
        ["spec.acme.solvers[0].http01.gateway.parentRefs[0].name: Required value: name is required when kind is specified"],
    ),
    (
        "acme solver with multiple http01 solver configs",
        {
            "acme": {
                **VALID_ACME,
                "solvers": [
                    {
                        "http01": {
                            "ingress": {},
                            "gatewayHTTPRoute": {"labels": {"a": "b"}, "parentRefs": [{"name": "blah", "kind": "Gateway"}]},
                        }
                    }
                ],
            }
        },
        ["spec.acme.solvers[0].http01: Required value: only 1 HTTP01 solver type may be configured"],
    ),
    (
        "acme solver with a negative waitInsteadOfSelfCheck duration",
        {"acme": {**VALID_ACME, "solvers": [{"http01": {"ingress": {}}, "waitInsteadOfSelfCheck": "-1s"}]}},
        ["spec.acme.solvers[0].waitInsteadOfSelfCheck: Invalid value: -1s: waitInsteadOfSelfCheck must not be negative"],
    ),
]

ONLY_ONE = "spec.acme.solvers[0].http01.ingress: Forbidden: only one of 'ingressClassName', 'name' or 'class' should be specified"
# TestValidateACMEIssuerHTTP01Config: (scenario, http01, expected)
HTTP01: list[tuple[str, dict[str, Any], list[str]]] = [
    ("ingress name field specified", {"ingress": {"name": "abc"}}, []),
    ("ingress class field specified", {"ingress": {"class": "abc"}}, []),
    ("ingressClassName field specified", {"ingress": {"ingressClassName": "abc"}}, []),
    ("neither field specified", {"ingress": {}}, []),
    ("no solver config type specified", {}, ["spec.acme.solvers[0].http01: Required value: no HTTP01 solver type configured"]),
    ("both ingress class and ingressClassName specified", {"ingress": {"class": "abc", "ingressClassName": "abc"}}, [ONLY_ONE]),
    ("both ingress class and ingress name specified", {"ingress": {"class": "abc", "name": "abc"}}, [ONLY_ONE]),
    ("both ingressClassName and ingress name specified", {"ingress": {"ingressClassName": "abc", "name": "abc"}}, [ONLY_ONE]),
    ("all three fields specified", {"ingress": {"name": "abc", "class": "abc", "ingressClassName": "abc"}}, [ONLY_ONE]),
    (
        "ingressClassName is invalid",
        {"ingress": {"ingressClassName": "azure/application-gateway"}},
        [
            'spec.acme.solvers[0].http01.ingress.ingressClassName: Invalid value: "azure/application-gateway": '
            f"must be a valid IngressClass name: {DNS1123}"
        ],
    ),
    ("acme issuer with valid http01 service config serviceType ClusterIP", {"ingress": {"serviceType": "ClusterIP"}}, []),
    ("acme issuer with valid http01 service config serviceType NodePort", {"ingress": {"serviceType": "NodePort"}}, []),
    ("acme issuer with valid http01 service config serviceType (empty string)", {"ingress": {"serviceType": ""}}, []),
    (
        "acme issuer with invalid http01 service config",
        {"ingress": {"serviceType": "InvalidServiceType"}},
        [
            'spec.acme.solvers[0].http01.ingress.serviceType: Invalid value: "InvalidServiceType": must be empty, "ClusterIP" or "NodePort"'
        ],
    ),
]


@pytest.mark.parametrize(("scenario", "spec", "expected"), ISSUERS, ids=[c[0] for c in ISSUERS])
def test_issuer_table(scenario: str, spec: dict[str, Any], expected: list[str]) -> None:
    assert [str(e) for e in cm.validate_issuer(spec)] == expected


@pytest.mark.parametrize(("scenario", "http01", "expected"), HTTP01, ids=[c[0] for c in HTTP01])
def test_http01_table(scenario: str, http01: dict[str, Any], expected: list[str]) -> None:
    spec = {"acme": {**VALID_ACME, "solvers": [{"http01": http01}]}}
    assert [str(e) for e in cm.validate_issuer(spec)] == expected


# TestValidateACMEIssuerGatewayParentRefs: (name, parentRefs, the error must contain; '' = no error)
PARENT_REFS: list[tuple[str, list[dict[str, Any]], str]] = [
    ("kind without name", [{"kind": "Gateway"}], "name is required"),
    ("name without kind", [{"name": "test-gateway"}], "kind is required"),
    ("empty parentRefs array", [], ""),
    ("both name and kind present", [{"name": "test-gateway", "kind": "Gateway"}], ""),
    ("multiple valid parentRefs", [{"name": "gateway-1", "kind": "Gateway"}, {"name": "gateway-2", "kind": "Gateway"}], ""),
]


@pytest.mark.parametrize(("name", "refs", "contains"), PARENT_REFS, ids=[c[0] for c in PARENT_REFS])
def test_gateway_parent_refs_table(name: str, refs: list[dict[str, Any]], contains: str) -> None:
    spec = {"acme": {**VALID_ACME, "solvers": [{"http01": {"gatewayHTTPRoute": {"parentRefs": refs}}}]}}
    errors = [str(e) for e in cm.validate_issuer(spec)]
    assert any(contains in e for e in errors) if contains else errors == []


def test_the_api_server_defaults_a_parent_refs_kind_before_the_webhook() -> None:
    # The CRD's schema defaults parentRefs[].kind to Gateway, so "name without kind" never reaches the webhook.
    refs = [{"name": "test-gateway"}]
    spec = {"acme": {**VALID_ACME, "solvers": [{"http01": {"gatewayHTTPRoute": {"parentRefs": refs}}}]}}
    assert cm.refusal({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "spec": spec}) is None


def test_refusal_message_and_namespace_selector() -> None:
    bad = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "ClusterIssuer",
        "metadata": {"name": "x"},
        "spec": {"ca": {}, "selfSigned": {}},
    }
    assert cm.refusal(bad) == (
        'admission webhook "webhook.cert-manager.io" denied the request: '
        "[spec.selfSigned: Forbidden: may not specify more than one issuer type, spec.ca.secretName: Required value]"
    )
    assert cm.judged(bad) and not cm.judged({**bad, "apiVersion": "cert-manager.io/v1alpha2"})
    assert cm.validation_disabled({"cert-manager.io/disable-validation": "true"})
    assert not cm.validation_disabled({}) and not cm.validation_disabled(None)
