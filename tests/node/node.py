"""A real Kubernetes node on this machine: containerd, kubelet, kube-scheduler, kube-proxy.

The node joins the control plane of tests/e2e/control_plane.py, started on the node's own
address so pods reach the API (the ``kubernetes`` Service, through kube-proxy) the way they
do in any cluster. Pods get addresses on a private bridge; the host owns the bridge's
gateway address, which is the node's address too. Nothing a pod sends is routed off the
machine: the bridge does no masquerading and the host does not forward.

Everything is set up step by step and each step registers its own undo at once, so a
failure half-way still leaves no process, mount, cgroup, link or iptables rule behind.
Binaries and images come from ``scripts/node.sh`` (cached outside the repo).

Needs root; one node per machine at a time (a lock file says so).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cluster_dns import ClusterDns
from control_plane import ControlPlane
from support.processes import free_port
from support.waiting import eventually_blocking

NODE_NAME = "ferry-node"
BRIDGE = "ferry0"
NODE_IP = "10.88.0.1"
POD_CIDR = "10.88.0.0/24"
LOCK = Path("/run/ferry-node.lock")
CNI_BIN = Path("/usr/lib/cni")
NETNS_DIR = Path("/run/netns")
CONTAINER_LOGS = Path("/var/log/containers")
READY_BUDGET_S = 120.0
# Chains `kube-proxy --cleanup` leaves: the kubelet's canaries and kube-proxy's own firewall
# chain (with the INPUT/OUTPUT jumps into it).
LEFT_CHAINS = ("KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT", "KUBE-FIREWALL")


@dataclass(frozen=True)
class NodeAssets:
    """What ``scripts/node.sh`` provisioned: binaries and image tarballs."""

    cache: Path

    def bin(self, name: str) -> Path:
        return self.cache / "bin" / name

    @property
    def runtime_image(self) -> str:
        """The image built from ./Dockerfile for the current code."""
        return (self.cache / "images" / "runtime.ref").read_text().strip()

    @property
    def pause_image(self) -> str:
        """The sandbox image, containerd's ``sandbox_image``."""
        return (self.cache / "images" / "pause.ref").read_text().strip()

    @property
    def image_tarballs(self) -> list[Path]:
        return sorted((self.cache / "images").glob("*.tar"))


class Teardown:
    """Undo steps run in reverse; each runs even when an earlier one failed."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, Callable[[], object]]] = []

    def push(self, what: str, undo: Callable[[], object]) -> None:
        self._steps.append((what, undo))

    def run(self) -> list[str]:
        failures = []
        while self._steps:
            what, undo = self._steps.pop()
            try:
                undo()
            except Exception as failed:  # every later undo still runs
                failures.append(f"{what}: {failed}")
        return failures


def sh(*command: str, check: bool = True, timeout: float = 60) -> str:
    """Run a command; its stdout (raises with stderr when ``check`` and it fails)."""
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=timeout)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def succeeds(*command: str) -> bool:
    """Whether a command exits 0 (its output is not needed)."""
    return subprocess.run(command, capture_output=True, check=False, timeout=60).returncode == 0


@contextlib.contextmanager
def exclusive_node() -> Iterator[None]:
    """One test node per machine: the bridge, iptables chains and cgroups are global."""
    with LOCK.open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError(
                f"another test node runs on this machine ({LOCK} is locked)"
            ) from None
        yield


def add_bridge(teardown: Teardown) -> None:
    """The pods' bridge with the node's address on it (before the API binds to it)."""
    if Path(f"/sys/class/net/{BRIDGE}").exists():
        sh("ip", "link", "delete", BRIDGE)  # left by a killed run: the lock is ours now
    sh("ip", "link", "add", BRIDGE, "type", "bridge")
    teardown.push("bridge", remove_bridge)
    sh("ip", "addr", "add", f"{NODE_IP}/24", "dev", BRIDGE)
    sh("ip", "link", "set", BRIDGE, "up")
    # Pods talk to this machine only, even where forwarding is on (a docker host): nothing
    # from the bridge is routed anywhere else.
    guard = ("FORWARD", "-i", BRIDGE, "!", "-o", BRIDGE, "-j", "DROP")
    sh("iptables", "-I", *guard)
    teardown.push("forward guard", lambda: sh("iptables", "-D", *guard, check=False))


def remove_bridge() -> None:
    """The bridge and every pod link still on it (a namespace kept alive by a lingering
    socket keeps its veth pair too, until one end is deleted)."""
    for line in sh("ip", "-o", "link", "show", "master", BRIDGE, check=False).splitlines():
        link = line.split(":")[1].strip().split("@")[0]
        sh("ip", "link", "delete", link, check=False)
    sh("ip", "link", "delete", BRIDGE, check=False)


@dataclass
class Node:
    """A node of ``plane``: its daemons' processes and where they keep their state."""

    plane: ControlPlane
    assets: NodeAssets
    workdir: Path
    teardown: Teardown
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def containerd_socket(self) -> Path:
        return self.run_dir / "containerd.sock"

    @property
    def run_dir(self) -> Path:
        # Unix socket paths are short: keep them under /run, not the deep temp dir.
        return Path("/run") / f"ferry-node-{self.workdir.name[-8:]}"

    @property
    def logs(self) -> Path:
        return self.workdir / "logs"

    def start(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True)
        self.teardown.push("run dir", lambda: self._remove_tree(self.run_dir))
        self.teardown.push("mounts", self._unmount_ours)
        netns_before = set(os.listdir(NETNS_DIR)) if NETNS_DIR.exists() else set()
        self.teardown.push("network namespaces", lambda: self._remove_netns(netns_before))
        logs_before = set(os.listdir(CONTAINER_LOGS)) if CONTAINER_LOGS.exists() else set()
        self.teardown.push("container log links", lambda: self._remove_links(logs_before))
        # After containerd and the kubelet are gone and no container is left in them.
        self.teardown.push("cgroups", self._remove_cgroups)
        self._start_containerd()
        for tarball in self.assets.image_tarballs:
            self.ctr("images", "import", str(tarball), timeout=300)
        self._start_kubelet()
        self._start_kube_proxy()
        self._spawn(
            "kube-scheduler",
            f"--kubeconfig={self.plane.kubeconfig}",
            "--leader-elect=false",
            "--secure-port=0",
        )
        self._wait_ready()

    def ctr(self, *args: str, check: bool = True, timeout: float = 60) -> str:
        """containerd's own CLI on this node's socket, in the CRI's namespace."""
        return sh(
            "ctr",
            f"--address={self.containerd_socket}",
            "--namespace=k8s.io",
            *args,
            check=check,
            timeout=timeout,
        )

    def _spawn(self, name: str, *args: str, binary: str | None = None) -> None:
        log = (self.logs / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [binary or str(self.assets.bin(name)), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.processes[name] = process
        self.teardown.push(name, lambda: _stop(process, log))

    def _start_containerd(self) -> None:
        cni_conf = self.workdir / "cni"
        cni_conf.mkdir()
        (cni_conf / "10-ferry.conflist").write_text(json.dumps(self._cni_config()))
        config = self.workdir / "containerd.toml"
        config.write_text(
            _CONTAINERD_CONFIG.format(
                root=self.workdir / "containerd",
                state=self.run_dir / "state",
                socket=self.containerd_socket,
                cni_conf=cni_conf,
                cni_bin=CNI_BIN,
                pause=self.assets.pause_image,
            )
        )
        self._spawn("containerd", f"--config={config}", binary="containerd")
        # Before containerd stops: every container it runs, so no shim outlives the test.
        self.teardown.push("containers", self._remove_containers)

        def serving() -> bool:
            if self.processes["containerd"].poll() is not None:
                raise RuntimeError(f"containerd exited:\n{self.log('containerd')}")
            return self.ctr("version", check=False).count("Server") > 0

        eventually_blocking(
            serving,
            what="containerd serving",
            within_s=30,
            every_s=0.2,
            context=lambda: self.log("containerd"),
        )

    def _cni_config(self) -> dict[str, object]:
        # isGateway off: the host already holds the gateway address (the bridge was made
        # before the API server bound to it), and the plugin then leaves ip_forward alone.
        return {
            "cniVersion": "0.4.0",
            "name": "ferry-node",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": False,
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": POD_CIDR, "gateway": NODE_IP}]],
                        "routes": [{"dst": "0.0.0.0/0", "gw": NODE_IP}],
                        "dataDir": str(self.workdir / "ipam"),
                    },
                }
            ],
        }

    def _service_ip(self, namespace: str, name: str) -> str | None:
        service = self.plane.get("service", "-n", namespace, name)
        address = (service or {}).get("spec", {}).get("clusterIP")
        return address if address and address != "None" else None

    def _start_kubelet(self) -> None:
        dns = ClusterDns(NODE_IP, self._service_ip)
        self.teardown.push("cluster DNS", dns.close)
        # Pods with dnsPolicy Default resolve nothing either: no query leaves the machine.
        resolv = self.workdir / "resolv.conf"
        resolv.write_text("nameserver 127.0.0.1\n")
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "address": NODE_IP,
            "port": free_port(),
            "readOnlyPort": 0,
            "healthzPort": 0,
            "containerRuntimeEndpoint": f"unix://{self.containerd_socket}",
            # cgroup v1 without systemd; swap may be on; the VM lacks CAP_SYS_RESOURCE.
            "cgroupDriver": "cgroupfs",
            "failSwapOn": False,
            "failCgroupV1": False,
            # Images are imported, never pulled: garbage-collecting one loses it for good.
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%"},
            "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
            "authorization": {"mode": "AlwaysAllow"},
            "podCIDR": POD_CIDR,
            "resolvConf": str(resolv),
            "clusterDNS": [NODE_IP],
            "clusterDomain": dns.domain,
            "podLogsDir": str(self.workdir / "pod-logs"),
            "registerNode": True,
        }
        path = self.workdir / "kubelet.json"
        path.write_text(json.dumps(config))
        self._spawn(
            "kubelet",
            f"--config={path}",
            f"--kubeconfig={self.plane.kubeconfig}",
            f"--root-dir={self.workdir / 'kubelet'}",
            f"--cert-dir={self.workdir / 'kubelet-pki'}",
            f"--hostname-override={NODE_NAME}",
            f"--node-ip={NODE_IP}",
        )

    def _start_kube_proxy(self) -> None:
        config = {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(self.plane.kubeconfig)},
            "hostnameOverride": NODE_NAME,
            "mode": "iptables",
            "clusterCIDR": POD_CIDR,
            "bindAddress": NODE_IP,
            "healthzBindAddress": f"127.0.0.1:{free_port()}",
            "metricsBindAddress": f"127.0.0.1:{free_port()}",
            "nodePortAddresses": [f"{NODE_IP}/32"],
            # Leave the machine's conntrack sysctls alone.
            "conntrack": {
                "maxPerCore": 0,
                "min": 0,
                "tcpEstablishedTimeout": "0s",
                "tcpCloseWaitTimeout": "0s",
            },
        }
        path = self.workdir / "kube-proxy.json"
        path.write_text(json.dumps(config))
        proxy = str(self.assets.bin("kube-proxy"))
        # After kube-proxy stops: its KUBE-* chains and rules go, and the kubelet's canaries.
        self.teardown.push("iptables rules", lambda: self._remove_iptables(proxy))
        self._spawn("kube-proxy", f"--config={path}")

    def _wait_ready(self) -> None:
        def ready() -> bool:
            node = self.plane.get("node", NODE_NAME)
            conditions = {
                c["type"]: c["status"] for c in (node or {}).get("status", {}).get("conditions", [])
            }
            if conditions.get("Ready") == "True":
                return True
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited {process.returncode}:\n{self.log(name)}")
            return False

        eventually_blocking(
            ready,
            what="the node Ready",
            within_s=READY_BUDGET_S,
            every_s=1,
            context=lambda: self.log("kubelet"),
        )

    def log(self, name: str, tail: int = 6000) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace")[-tail:] if path.exists() else ""

    # -- undo steps ---------------------------------------------------------------------

    def _remove_containers(self) -> None:
        """Kill and delete every task and container containerd still runs (the kubelet
        stops pods on its own when it has the time; this is the floor)."""
        for task in self.ctr("tasks", "list", "--quiet", check=False).split():
            self.ctr("tasks", "kill", "--signal=SIGKILL", task, check=False)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            tasks = self.ctr("tasks", "list", "--quiet", check=False).split()
            for task in tasks:
                self.ctr("tasks", "delete", "--force", task, check=False)
            if not tasks:
                break
            time.sleep(0.5)
        for container in self.ctr("containers", "list", "--quiet", check=False).split():
            self.ctr("containers", "delete", container, check=False)

    def _unmount_ours(self) -> None:
        """Unmount whatever the runtime or kubelet left mounted below our directories."""
        roots = (str(self.workdir), str(self.run_dir))
        for mount in sorted(_mount_points(), key=len, reverse=True):
            if mount.startswith(roots):
                sh("umount", "--lazy", mount, check=False)

    def _remove_netns(self, before: set[str]) -> None:
        if not NETNS_DIR.exists():
            return
        for name in set(os.listdir(NETNS_DIR)) - before:
            path = NETNS_DIR / name
            sh("umount", "--lazy", str(path), check=False)
            path.unlink(missing_ok=True)

    def _remove_links(self, before: set[str]) -> None:
        if not CONTAINER_LOGS.exists():
            return
        for name in set(os.listdir(CONTAINER_LOGS)) - before:
            (CONTAINER_LOGS / name).unlink(missing_ok=True)

    def _remove_cgroups(self) -> None:
        """The kubelet's ``kubepods`` hierarchy in every v1 controller, deepest first."""
        for controller in Path("/sys/fs/cgroup").iterdir():
            top = controller / "kubepods"
            if not top.is_dir():
                continue
            for path in sorted(
                (p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
            ):
                with contextlib.suppress(OSError):
                    path.rmdir()
            with contextlib.suppress(OSError):
                top.rmdir()

    def _remove_iptables(self, proxy: str) -> None:
        sh(proxy, "--cleanup", check=False, timeout=60)
        for table in ("filter", "nat", "mangle"):
            for chain in LEFT_CHAINS:
                if not succeeds("iptables", "-t", table, "-L", chain, "-n"):
                    continue
                for builtin in ("INPUT", "OUTPUT", "FORWARD", "PREROUTING", "POSTROUTING"):
                    while succeeds("iptables", "-t", table, "-D", builtin, "-j", chain):
                        pass
                sh("iptables", "-t", table, "-F", chain, check=False)
                sh("iptables", "-t", table, "-X", chain, check=False)

    @staticmethod
    def _remove_tree(path: Path) -> None:
        sh("rm", "-rf", "--one-file-system", str(path), check=False)


def _mount_points() -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [line.split()[4] for line in lines]


def _stop(process: subprocess.Popen[bytes], log: object) -> None:
    """SIGTERM, then SIGKILL after a bounded wait; the process is ours (we hold its PID)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    close = getattr(log, "close", None)
    if close is not None:
        close()


_CONTAINERD_CONFIG = """\
version = 2
root = "{root}"
state = "{state}"

[plugins."io.containerd.internal.v1.opt"]
  path = "{root}/opt"

[grpc]
  address = "{socket}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{pause}"
  # The VM lacks CAP_SYS_RESOURCE: lowering a container's oom_score_adj is refused.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{cni_bin}"
    conf_dir = "{cni_conf}"
"""


@dataclass
class Cluster:
    """The control plane and its one node."""

    plane: ControlPlane
    node: Node
