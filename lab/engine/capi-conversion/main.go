// capi-conversion: Cluster API's own conversion webhook for Cluster (v1beta1 <-> v1beta2), as its controller manager
// serves it (sigs.k8s.io/cluster-api/core/webhooks/conversion through controller-runtime's conversion handler),
// without the rest of the manager. Listens on 127.0.0.1 (port 0: any free one), prints "listening on <addr>".
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiconversion "sigs.k8s.io/cluster-api/core/webhooks/conversion"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	cert := flag.String("cert", "", "serving certificate (PEM)")
	key := flag.String("key", "", "its private key (PEM)")
	flag.Parse()
	// A v1beta2 reference names a group; v1beta1's names a version, which Cluster API's manager reads from the
	// referenced kind's CRD (its contract label) through a client. This server has no client: it answers
	// <group>/v1beta1 for every group (CAPO's OpenStackCluster is v1beta1). That only shapes the v1beta1 view of a
	// Cluster stored as v1beta2; v1beta1 -> v1beta2 (apiVersion -> apiGroup) is Cluster API's code alone.
	capiconversion.SetAPIVersionGetter(func(_ context.Context, gk schema.GroupKind) (string, error) {
		return gk.Group + "/v1beta1", nil
	})
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clusterv1.AddToScheme, clusterv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			log.Fatal(err)
		}
	}
	converter, err := capiconversion.Cluster(scheme)
	if err != nil {
		log.Fatal(err)
	}
	registry := conversion.NewRegistry()
	if err := registry.RegisterConverter(schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"},
		converter); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/convert", conversion.NewWebhookHandler(scheme, registry))
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", listener.Addr())
	os.Stdout.Sync()
	log.Fatal(http.ServeTLS(listener, mux, *cert, *key))
}
