module kubeadm-rs/testbed/images/dnscheck

go 1.19
