package cmd

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newScheduleCmd) }

type scheduleOptions struct {
	Kind    string
	Every   string
	Install bool
	Print   bool
	Sync    bool
}

func newScheduleCmd(f *Factory) *cobra.Command {
	opts := &scheduleOptions{}
	cmd := &cobra.Command{
		Use:   "schedule [--print | --install] [--kind cron|systemd] [--every hourly]",
		Short: "Print or install a cron line / systemd user timer that runs consolidate",
		Long: `Schedule prints (--print, the default) or installs for the current user
(--install) a job running memctl consolidate on this memory directory at a
fixed time: a crontab line (--kind cron) or a systemd user service and timer
(--kind systemd).

The job sets MEMCTL_DIR to the memory directory and carries MEMCTL_MODEL and
OPENAI_BASE_URL as they are set now; secrets such as OPENAI_API_KEY never go
into the job: put them in ~/.config/memctl/env (KEY=value lines, mode 600),
which the job reads when it exists. It appends its output to
$XDG_STATE_HOME/memctl/consolidate.log (~/.local/state/memctl/…). Runs do
not overlap: consolidate takes the memory's lock, and a run that finds it
held waits git.lock_wait, then exits 3. Exit 4 means the model could not be
used (what the rules decided is committed; the rest stays queued).

--sync runs memctl sync after each consolidate (even when consolidate
could not use the model), so the memory is shared through its git remote
(docs/SYNC.md).

--every: hourly (the default), daily, or a period such as 15m, 30m, 2h or
6h (minutes dividing an hour, hours dividing a day). The minute is derived
from the directory, so that several memories do not all start at once.

--install with cron adds the line to your crontab (crontab -l, crontab -),
unless a line for this directory is there already; with systemd it writes
memctl-consolidate-<name>.service and .timer to ~/.config/systemd/user/ and
runs systemctl --user daemon-reload and enable --now on the timer.`,
		Example: `  memctl schedule --print
  memctl schedule --kind systemd --every 30m --print
  memctl schedule --install --every daily
  memctl schedule --sync --every 30m --print`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Install && opts.Print {
				return FlagErrorf("give --print or --install, not both")
			}
			if opts.Kind != "cron" && opts.Kind != "systemd" {
				return FlagErrorf("invalid --kind %q: want cron or systemd", opts.Kind)
			}
			return runSchedule(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Kind, "kind", "cron", "cron or systemd")
	cmd.Flags().StringVar(&opts.Every, "every", "hourly", "hourly, daily, or a period: 15m, 30m, 2h, 6h, …")
	cmd.Flags().BoolVar(&opts.Install, "install", false, "install the job for the current user")
	cmd.Flags().BoolVar(&opts.Print, "print", false, "print the job (the default)")
	cmd.Flags().BoolVar(&opts.Sync, "sync", false, "run memctl sync after each consolidate (docs/SYNC.md)")
	return cmd
}

// period is a schedule: every N minutes (N < 60) or N hours, starting at
// minute Min.
type period struct {
	Minutes, Hours, Min, Hour int
}

func parseEvery(s string, seed uint32) (period, error) {
	p := period{Min: int(seed % 60), Hour: int(seed/60) % 24}
	switch s {
	case "hourly", "1h":
		p.Hours = 1
		return p, nil
	case "daily", "24h":
		p.Hours = 24
		return p, nil
	}
	d, err := time.ParseDuration(s)
	bad := FlagErrorf("invalid --every %q: want hourly, daily, or minutes dividing an hour (15m, 30m) or hours dividing a day (2h, 6h)", s)
	switch {
	case err != nil || d <= 0 || d%time.Minute != 0:
		return p, bad
	case d < time.Hour && 60%int(d.Minutes()) == 0:
		p.Minutes, p.Min = int(d.Minutes()), p.Min%int(d.Minutes())
	case d%time.Hour == 0 && 24%int(d.Hours()) == 0:
		p.Hours = int(d.Hours())
	default:
		return p, bad
	}
	return p, nil
}

func (p period) cron() string {
	switch {
	case p.Minutes > 0:
		return fmt.Sprintf("%d-59/%d * * * *", p.Min, p.Minutes)
	case p.Hours == 24:
		return fmt.Sprintf("%d %d * * *", p.Min, p.Hour)
	case p.Hours == 1:
		return fmt.Sprintf("%d * * * *", p.Min)
	}
	return fmt.Sprintf("%d %d-23/%d * * *", p.Min, p.Hour%p.Hours, p.Hours)
}

func (p period) onCalendar() string {
	switch {
	case p.Minutes > 0:
		return fmt.Sprintf("*-*-* *:%02d/%d:00", p.Min, p.Minutes)
	case p.Hours == 24:
		return fmt.Sprintf("*-*-* %02d:%02d:00", p.Hour, p.Min)
	}
	return fmt.Sprintf("*-*-* %02d/%d:%02d:00", p.Hour%p.Hours, p.Hours, p.Min)
}

// scheduleJob is everything a job needs.
type scheduleJob struct {
	Dir, Memctl, Log, EnvFile, Name string
	Env                             [][2]string
	When                            period
	Sync                            bool // memctl sync after each consolidate
}

func newScheduleJob(f *Factory, every string) (*scheduleJob, error) {
	dir, err := f.MemoryDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, mdmem.MarkerDir)); err != nil {
		return nil, &HintError{Err: fmt.Errorf("%s is not a memctl memory", dir), Hint: "run memctl init " + dir + " first, or give --dir"}
	}
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	h := fnv.New32a()
	h.Write([]byte(dir))
	when, err := parseEvery(every, h.Sum32())
	if err != nil {
		return nil, err
	}
	home := f.Getenv("HOME")
	state := f.Getenv("XDG_STATE_HOME")
	if state == "" || !filepath.IsAbs(state) {
		state = filepath.Join(home, ".local", "state")
	}
	cfg := f.Getenv("XDG_CONFIG_HOME")
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = filepath.Join(home, ".config")
	}
	j := &scheduleJob{Dir: dir, Memctl: self, Log: filepath.Join(state, "memctl", "consolidate.log"),
		EnvFile: filepath.Join(cfg, "memctl", "env"), Name: "memctl-consolidate-" + projectName(dir), When: when}
	j.Env = append(j.Env, [2]string{"MEMCTL_DIR", dir}, [2]string{logTimeEnv, "1"})
	for _, k := range []string{"MEMCTL_MODEL", "OPENAI_BASE_URL"} {
		if v := f.Getenv(k); v != "" {
			j.Env = append(j.Env, [2]string{k, v})
		}
	}
	return j, nil
}

// cronMarker ends the crontab line so that install finds it again.
func (j *scheduleJob) cronMarker() string { return "# memctl consolidate " + j.Dir }

func (j *scheduleJob) cronLine() string {
	var env []string
	for _, kv := range j.Env {
		env = append(env, kv[0]+"="+shellQuote(kv[1]))
	}
	cmd := fmt.Sprintf("mkdir -p %s && { [ ! -f %s ] || { set -a; . %s; set +a; }; } && %s %s consolidate >> %s 2>&1",
		shellQuote(filepath.Dir(j.Log)), shellQuote(j.EnvFile), shellQuote(j.EnvFile),
		strings.Join(env, " "), shellQuote(j.Memctl), shellQuote(j.Log))
	if j.Sync {
		// sync after consolidate, even when consolidate could not use the model
		cmd = "{ " + cmd + "; " + strings.Join(env, " ") + " " + shellQuote(j.Memctl) + " sync >> " + shellQuote(j.Log) + " 2>&1; }"
	}
	// cron turns an unescaped % into a newline
	return j.When.cron() + " " + strings.ReplaceAll(cmd, "%", `\%`) + " " + j.cronMarker()
}

func (j *scheduleJob) systemdUnits() (service, timer string) {
	var b strings.Builder
	fmt.Fprintf(&b, "[Unit]\nDescription=memctl consolidate %s\n\n[Service]\nType=oneshot\n", j.Dir)
	for _, kv := range j.Env {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(kv[0]+"="+kv[1]))
	}
	consolidate := systemdQuote(j.Memctl) + " consolidate"
	if j.Sync {
		// "-": sync runs even when consolidate could not use the model
		consolidate = "-" + consolidate + "\nExecStart=" + systemdQuote(j.Memctl) + " sync"
	}
	fmt.Fprintf(&b, "EnvironmentFile=-%s\nExecStartPre=/bin/mkdir -p %s\nExecStart=%s\nStandardOutput=append:%s\nStandardError=append:%s\n",
		j.EnvFile, systemdQuote(filepath.Dir(j.Log)), consolidate, j.Log, j.Log)
	service = b.String()
	timer = fmt.Sprintf("[Unit]\nDescription=memctl consolidate %s, on a schedule\n\n[Timer]\nOnCalendar=%s\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n", j.Dir, j.When.onCalendar())
	return service, timer
}

func systemdQuote(s string) string {
	if !strings.ContainsAny(s, " \t\"'\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func runSchedule(ctx context.Context, f *Factory, opts *scheduleOptions) error {
	j, err := newScheduleJob(f, opts.Every)
	if j != nil {
		j.Sync = opts.Sync
	}
	if err != nil {
		return err
	}
	w := f.IO.Out
	if opts.Kind == "cron" {
		line := j.cronLine()
		if !opts.Install {
			fmt.Fprintln(w, line)
			return nil
		}
		return installCron(ctx, f, j, line)
	}
	service, timer := j.systemdUnits()
	if !opts.Install {
		fmt.Fprintf(w, "# ~/.config/systemd/user/%s.service\n%s\n# ~/.config/systemd/user/%s.timer\n%s", j.Name, service, j.Name, timer)
		return nil
	}
	cfg := f.Getenv("XDG_CONFIG_HOME")
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = filepath.Join(f.Getenv("HOME"), ".config")
	}
	unitDir := filepath.Join(cfg, "systemd", "user")
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{j.Name + ".service": service, j.Name + ".timer": timer} {
		if err := mdmem.WriteFileAtomic(ctx, filepath.Join(unitDir, name), []byte(body), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "memctl: wrote %s\n", filepath.Join(unitDir, name))
	}
	for _, args := range [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", j.Name + ".timer"}} {
		out, err := exec.CommandContext(ctx, "systemctl", args...).CombinedOutput()
		if err != nil {
			return &HintError{Err: fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out)),
				Hint: "the unit files are written; without a systemd user session use --kind cron"}
		}
	}
	fmt.Fprintf(w, "memctl: enabled %s.timer (systemctl --user list-timers shows it)\n", j.Name)
	return nil
}

func installCron(ctx context.Context, f *Factory, j *scheduleJob, line string) error {
	cur, err := exec.CommandContext(ctx, "crontab", "-l").Output()
	if err != nil {
		// "no crontab for user" is an empty crontab; a missing crontab
		// command is not
		if _, lerr := exec.LookPath("crontab"); lerr != nil {
			return &HintError{Err: fmt.Errorf("crontab: %w", lerr), Hint: "install cron, or use --kind systemd"}
		}
		cur = nil
	}
	for _, l := range strings.Split(string(cur), "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), j.cronMarker()) {
			fmt.Fprintf(f.IO.Out, "memctl: your crontab already runs consolidate for %s; nothing to change\n", j.Dir)
			return nil
		}
	}
	next := string(cur)
	if next != "" && !strings.HasSuffix(next, "\n") {
		next += "\n"
	}
	next += line + "\n"
	cmd := exec.CommandContext(ctx, "crontab", "-")
	cmd.Stdin = strings.NewReader(next)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("crontab -: %w: %s", err, bytes.TrimSpace(out))
	}
	fmt.Fprintf(f.IO.Out, "memctl: added to your crontab:\n%s\n", line)
	return nil
}
