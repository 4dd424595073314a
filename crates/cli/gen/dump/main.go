// Dumps upstream kubeadm v1.25.16's cobra command tree and workflow phase trees as JSON, for
// crates/cli/gen/gen.py (see there for how to run it). Not part of the Rust build.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"
	kcmd "k8s.io/kubernetes/cmd/kubeadm/app/cmd"
	initp "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/init"
	joinp "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/join"
	resetp "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/reset"
	nodep "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/upgrade/node"
	"k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow"
)

type Flag struct {
	Name, Shorthand, Type, Default, Usage, NoOptDefVal string
	Hidden                                             bool
	Deprecated, ShorthandDeprecated                    string
	Annotations                                        map[string][]string `json:",omitempty"`
}

type Cmd struct {
	Use, Short, Long, Example                  string
	Aliases                                    []string
	Hidden                                     bool
	Deprecated                                 string
	Runnable                                   bool
	Args                                       string
	ValidArgs                                  []string `json:",omitempty"`
	Flags, Persistent                          []Flag
	Subs                                       []Cmd
	Workflow                                   string `json:",omitempty"`
	DisableFlagsInUseLine                      bool
}

type Phase struct {
	Name, Short, Long, Example string
	Aliases                    []string
	Hidden, RunAllSiblings     bool
	HasRun, HasRunIf           bool
	InheritFlags               []string
	LocalFlags                 []Flag
	Args                       string
	Phases                     []Phase
}

type Workflow struct {
	Command         string
	Phases          []Phase
	AdditionalFlags []Flag
}

func dumpFlags(fs *pflag.FlagSet) []Flag {
	out := []Flag{}
	if fs == nil {
		return out
	}
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, Flag{f.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Usage, f.NoOptDefVal, f.Hidden, f.Deprecated, f.ShorthandDeprecated, f.Annotations})
	})
	fs.SortFlags = true
	return out
}

func errs(fn cobra.PositionalArgs, c *cobra.Command) []string {
	r := []string{}
	for n := 0; n <= 4; n++ {
		args := []string{"a1", "a2", "a3", "a4"}[:n]
		if e := fn(c, args); e != nil {
			r = append(r, e.Error())
		} else {
			r = append(r, "")
		}
	}
	return r
}

func eq(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func classify(c *cobra.Command, fn cobra.PositionalArgs) string {
	if fn == nil {
		return "Legacy"
	}
	got := errs(fn, c)
	if eq(got, errs(cobra.NoArgs, c)) {
		return "None"
	}
	if eq(got, errs(cobra.ArbitraryArgs, c)) {
		return "Any"
	}
	for n := 0; n <= 3; n++ {
		if eq(got, errs(cobra.MaximumNArgs(n), c)) {
			return fmt.Sprintf("Max(%d)", n)
		}
		if eq(got, errs(cobra.ExactArgs(n), c)) {
			return fmt.Sprintf("Exact(%d)", n)
		}
		if eq(got, errs(cobra.MinimumNArgs(n), c)) {
			return fmt.Sprintf("Min(%d)", n)
		}
	}
	b, _ := json.Marshal(got)
	return "Custom" + string(b)
}

var workflows = map[string]bool{"kubeadm init": true, "kubeadm join": true, "kubeadm reset": true, "kubeadm upgrade node": true}

func dumpCmd(c *cobra.Command, path string) Cmd {
	d := Cmd{Use: c.Use, Short: c.Short, Long: c.Long, Example: c.Example, Aliases: c.Aliases, Hidden: c.Hidden,
		Deprecated: c.Deprecated, Runnable: c.Runnable(), Args: classify(c, c.Args), ValidArgs: c.ValidArgs,
		DisableFlagsInUseLine: c.DisableFlagsInUseLine}
	d.Flags = dumpFlags(c.Flags())
	d.Persistent = dumpFlags(c.PersistentFlags())
	if workflows[path] {
		d.Workflow = path
		if i := strings.Index(d.Long, "\n\nThe \""); i >= 0 {
			d.Long = d.Long[:i]
		}
		if d.Long == c.Short {
			d.Long = ""
		}
		fl := []Flag{}
		for _, f := range d.Flags {
			if f.Name != "skip-phases" {
				fl = append(fl, f)
			}
		}
		d.Flags = fl
	}
	for _, s := range c.Commands() {
		if workflows[path] && s.Name() == "phase" {
			continue
		}
		d.Subs = append(d.Subs, dumpCmd(s, path+" "+s.Name()))
	}
	return d
}

func dumpPhase(p workflow.Phase, cmd *cobra.Command) Phase {
	d := Phase{Name: p.Name, Short: p.Short, Long: p.Long, Example: p.Example, Aliases: p.Aliases, Hidden: p.Hidden,
		RunAllSiblings: p.RunAllSiblings, HasRun: p.Run != nil, HasRunIf: p.RunIf != nil, InheritFlags: p.InheritFlags,
		LocalFlags: dumpFlags(p.LocalFlags)}
	if p.ArgsValidator != nil {
		d.Args = classify(cmd, p.ArgsValidator)
	}
	for _, s := range p.Phases {
		d.Phases = append(d.Phases, dumpPhase(s, cmd))
	}
	return d
}

func find(root *cobra.Command, path string) *cobra.Command {
	c, _, err := root.Find(strings.Fields(path)[1:])
	if err != nil {
		panic(err)
	}
	return c
}

// additional: flags present on some phase command but neither in the parent command nor in any phase's local flags.
func additional(root *cobra.Command, path string, phases []Phase) []Flag {
	parent := find(root, path)
	seen := map[string]bool{}
	local := map[string]bool{}
	var walkp func([]Phase)
	walkp = func(ps []Phase) {
		for _, p := range ps {
			for _, f := range p.LocalFlags {
				local[f.Name] = true
			}
			walkp(p.Phases)
		}
	}
	walkp(phases)
	out := []Flag{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if parent.Flags().Lookup(f.Name) == nil && !local[f.Name] && !seen[f.Name] {
				seen[f.Name] = true
				out = append(out, Flag{f.Name, f.Shorthand, f.Value.Type(), f.DefValue, f.Usage, f.NoOptDefVal, f.Hidden, f.Deprecated, f.ShorthandDeprecated, f.Annotations})
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	for _, s := range parent.Commands() {
		if s.Name() == "phase" {
			walk(s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func main() {
	klog.InitFlags(nil)
	pflag.CommandLine.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	pflag.Set("logtostderr", "true")
	for _, n := range []string{"version", "log-flush-frequency", "alsologtostderr", "log-backtrace-at", "log-dir", "logtostderr", "stderrthreshold", "vmodule"} {
		pflag.CommandLine.MarkHidden(n)
	}
	root := kcmd.NewKubeadmCommand(os.Stdin, os.Stdout, os.Stderr)
	globals := dumpFlags(pflag.CommandLine)
	tree := dumpCmd(root, "kubeadm")
	wfs := []Workflow{}
	add := func(path string, ps []workflow.Phase) {
		c := find(root, path)
		w := Workflow{Command: path}
		for _, p := range ps {
			w.Phases = append(w.Phases, dumpPhase(p, c))
		}
		// Phases (and their validators) cannot be compared by value; a leaf with no ArgsValidator adopts the command's.
		w.AdditionalFlags = additional(root, path, w.Phases)
		wfs = append(wfs, w)
	}
	add("kubeadm init", []workflow.Phase{initp.NewPreflightPhase(), initp.NewCertsPhase(), initp.NewKubeConfigPhase(), initp.NewKubeletStartPhase(), initp.NewControlPlanePhase(), initp.NewEtcdPhase(), initp.NewWaitControlPlanePhase(), initp.NewUploadConfigPhase(), initp.NewUploadCertsPhase(), initp.NewMarkControlPlanePhase(), initp.NewBootstrapTokenPhase(), initp.NewKubeletFinalizePhase(), initp.NewAddonPhase()})
	add("kubeadm join", []workflow.Phase{joinp.NewPreflightPhase(), joinp.NewControlPlanePreparePhase(), joinp.NewCheckEtcdPhase(), joinp.NewKubeletStartPhase(), joinp.NewControlPlaneJoinPhase()})
	add("kubeadm reset", []workflow.Phase{resetp.NewPreflightPhase(), resetp.NewRemoveETCDMemberPhase(), resetp.NewCleanupNodePhase()})
	add("kubeadm upgrade node", []workflow.Phase{nodep.NewPreflightPhase(), nodep.NewControlPlane(), nodep.NewKubeletConfigPhase()})
	_ = errors.New
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]interface{}{"globals": globals, "root": tree, "workflows": wfs})
}
