module kubeadm-rs/testbed/goyaml

go 1.19

require (
	gopkg.in/yaml.v2 v2.4.0
	k8s.io/apimachinery v0.25.16
	sigs.k8s.io/yaml v1.2.0
)

require sigs.k8s.io/json v0.0.0-20220713155537-f223a00ba0e2 // indirect
