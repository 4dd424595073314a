// dnscheck: what a pod of the testbed runs to show the cluster's DNS answers from inside a pod.
//
//	dnscheck NAME [SECONDS]
//
// Looks NAME up through the pod's /etc/resolv.conf (the kubelet points it at the cluster DNS
// Service) with Go's own resolver, every second until it answers or SECONDS (default 60) pass;
// prints each address and exits 0 on an answer, prints the last error and exits 1 otherwise.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dnscheck NAME [SECONDS]")
		os.Exit(2)
	}
	seconds := 60
	if len(os.Args) > 2 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "dnscheck: SECONDS:", err)
			os.Exit(2)
		}
		seconds = n
	}
	resolver := &net.Resolver{PreferGo: true}
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		addrs, err := resolver.LookupHost(ctx, os.Args[1])
		cancel()
		if err == nil {
			for _, a := range addrs {
				fmt.Println(a)
			}
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "dnscheck:", err)
			os.Exit(1)
		}
		time.Sleep(time.Second)
	}
}
