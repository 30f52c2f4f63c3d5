#!/bin/sh
# Test certificates, made with the openssl CLI at test time (never committed): two CAs, server
# certificates for localhost / 127.0.0.1 from each, and client certificates from each.
#   make_test_certs.sh DIR
# writes DIR/{ca,ca2}.{pem,key}, DIR/server.{pem,key} (ca), DIR/server2.{pem,key} (ca2),
# DIR/client.{pem,key} (ca), DIR/client-other.{pem,key} (ca2). EC P-256 keys: fast to make.
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

ca() {  # ca NAME CN
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 2 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$1.pem"
}

leaf() {  # leaf NAME CA CN EXTENDED_KEY_USAGE [SAN]
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$3" -out "$1.csr"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=$4"
    if [ -n "${5:-}" ]; then echo "subjectAltName=$5"; fi
  } >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 -sha256 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

ca ca "warmpool test CA"
ca ca2 "warmpool other test CA"
leaf server ca warmpool-scaler serverAuth "DNS:localhost,IP:127.0.0.1"
leaf server2 ca2 warmpool-scaler serverAuth "DNS:localhost,IP:127.0.0.1"
leaf client ca keda-operator clientAuth
leaf client-other ca2 keda-operator clientAuth
