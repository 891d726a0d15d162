# Sourced, not run: the versions the test clusters are built at, in one place so the node's
# kubelet always matches the control plane. Each may be overridden from the environment.
K8S_VERSION="${K8S_VERSION:-1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-3.6.5}"
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-0.316.0}"
