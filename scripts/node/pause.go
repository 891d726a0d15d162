// The sandbox ("pause") container of the test node: it holds a pod's namespaces open until
// the kubelet stops the pod. Static and dependency-free, so its image is FROM scratch and
// is built here rather than pulled (no image registry is reachable from the test machine).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
