package kernel

import (
	"fmt"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/agent"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/text"
	"github.com/roadmap-dev/roadmap/internal/trace"
)

// Logf prints a line of the Job's log. Its arguments often hold model or
// tool text (a reason, a plan title, an error), so the line is masked and
// made plain: it can never be a workflow command.
func (j *Job) Logf(format string, args ...any) {
	j.println(actionsio.PlainLine(j.O.Mask(fmt.Sprintf(format, args...))))
}

// println writes one line of the log whole, whatever session writes too.
func (j *Job) println(line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fmt.Fprintln(j.O.Log, line)
}

// Section opens a collapsible section of the job log for one phase; the
// function it returns closes it. Only roadmap's own lines open or close one.
func (j *Job) Section(format string, args ...any) func() {
	j.println(actionsio.Group(j.O.Mask(fmt.Sprintf(format, args...))))
	return func() { j.println(actionsio.EndGroup) }
}

// Command prints one of the runner's own workflow commands (::error:: and
// the like) whose message may hold model text.
func (j *Job) Command(level, msg string) {
	j.println(actionsio.Command(level, j.O.Mask(msg)))
}

// Event records e in the trace, in the Job's group and under its number
// when e names none.
func (j *Job) Event(e trace.Event) {
	if e.Group == 0 {
		j.mu.Lock()
		e.Group = j.Group
		j.mu.Unlock()
	}
	if e.Job == 0 {
		e.Job = j.Number
	}
	if err := j.O.Trace.Add(e); err != nil {
		j.Logf("roadmap: trace: %v", err)
	}
}

// Observer is the one observer of the agent's events for both phases: each
// model call is booked in the log before its request goes out, then added to
// the Job's spend, traced and settled by a second spend line.
func (j *Job) Observer() agent.Observer { return (*observer)(j) }

type observer Job

// ModelBooked numbers the call and prints its booking: the call's estimate,
// the spend report counts for it when the Job is killed before it settles.
func (ob *observer) ModelBooked(e agent.ModelBookedEvent) {
	j := (*Job)(ob)
	j.book(&j.booked, j.currentGroup(), e)
}

// ModelCall settles the booked call: what the provider counted, nothing for
// a refusal, and the booking itself for a call that ended with no answer
// (it may have been served), counted in EstimatedCalls.
func (ob *observer) ModelCall(e agent.ModelCallEvent) {
	j := (*Job)(ob)
	j.settle(&j.booked, j.currentGroup(), e)
}

func (ob *observer) ToolCall(e agent.ToolCallEvent) {
	(*Job)(ob).Event(trace.Event{Type: trace.TypeToolCall, Tool: e.Name, ArgsDigest: e.ArgsDigest, ResultClass: e.ResultClass, Duration: e.Duration})
}

func (ob *observer) Retry(e agent.RetryEvent) {
	(*Job)(ob).Event(trace.Event{Type: trace.TypeRetry, Reason: e.Reason, Attempt: e.Attempt, Wait: e.Wait})
}

func (j *Job) currentGroup() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.Group
}

// book numbers a call of a session whose call in flight is *slot and prints
// its booking.
func (j *Job) book(slot **trace.SpendEntry, group int, e agent.ModelBookedEvent) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls++
	*slot = &trace.SpendEntry{Job: j.Number, Group: group, Call: j.calls, Model: e.Model, Booked: true,
		TokensIn: e.TokensIn, TokensOut: e.TokensOut, USD: e.USD}
	j.spendLine(**slot)
}

// settle settles the call booked in *slot.
func (j *Job) settle(slot **trace.SpendEntry, group int, e agent.ModelCallEvent) {
	j.mu.Lock()
	book := *slot
	*slot = nil
	if book == nil {
		// A call nobody booked (an observer used on its own): number it now.
		j.calls++
		book = &trace.SpendEntry{Call: j.calls}
	}
	tin, tout, usd := e.TokensIn, e.TokensOut, e.USD
	if e.Unanswered && book.Booked {
		// Each attempt that may have been served counts at the booking.
		n := max(e.Attempts, 1)
		tin, tout, usd = int64(n)*book.TokensIn, int64(n)*book.TokensOut, float64(n)*book.USD
		j.Estimated++
	}
	j.Spend = j.Spend.Add(record.Spend{TokensIn: tin, TokensOut: tout, USD: usd, ModelCalls: 1})
	j.mu.Unlock()
	ev := trace.Event{Type: trace.TypeModelCall, Model: e.Model, TokensIn: tin, TokensOut: tout, USD: usd,
		Duration: e.Duration, Outcome: e.Outcome, Job: j.Number, Group: group}
	j.Event(ev)
	line := trace.SpendFromEvent(ev, book.Call)
	line.Estimated = e.Unanswered && book.Booked
	j.mu.Lock()
	j.spendLine(line)
	j.mu.Unlock()
}

// SessionObserver is the observer of one of the agent sessions that run at
// once (implement.parallel_groups): its calls are numbered, booked and
// settled on the Job's one count and spend like the Job's own, each
// session's call in flight kept apart, and its events and spend lines say
// its group whatever Group says.
func (j *Job) SessionObserver(group int) agent.Observer {
	return &sessionObserver{j: j, group: group}
}

type sessionObserver struct {
	j      *Job
	group  int
	booked *trace.SpendEntry
}

func (s *sessionObserver) ModelBooked(e agent.ModelBookedEvent) { s.j.book(&s.booked, s.group, e) }
func (s *sessionObserver) ModelCall(e agent.ModelCallEvent)     { s.j.settle(&s.booked, s.group, e) }
func (s *sessionObserver) ToolCall(e agent.ToolCallEvent) {
	s.j.Event(trace.Event{Type: trace.TypeToolCall, Group: s.group, Tool: e.Name, ArgsDigest: e.ArgsDigest, ResultClass: e.ResultClass, Duration: e.Duration})
}
func (s *sessionObserver) Retry(e agent.RetryEvent) {
	s.j.Event(trace.Event{Type: trace.TypeRetry, Group: s.group, Reason: e.Reason, Attempt: e.Attempt, Wait: e.Wait})
}

// spendLine is the one writer of spend lines: the line report reads back
// (trace.ParseSpendLines) from the log of a Job killed before its next mark.
// Stage's and implement's Jobs both print theirs here. The caller holds mu.
func (j *Job) spendLine(e trace.SpendEntry) {
	fmt.Fprintln(j.O.Log, actionsio.PlainLine(j.O.Trace.SpendLine(e)))
}

// AgentSpend is a record spend as the agent counts it.
func AgentSpend(s record.Spend) agent.Spend {
	return agent.Spend{TokensIn: s.TokensIn, TokensOut: s.TokensOut, USD: s.USD, ModelCalls: s.ModelCalls}
}

// AgentConfig is the part of an agent step's configuration every Job sets
// the same way: the sandbox, the one observer, the clock, the budgets with
// the item's spend so far, and the request limits.
func (j *Job) AgentConfig(models []agent.Tier) agent.Config {
	o := j.O
	return agent.Config{
		Models: models, Sandbox: o.Sandbox, Observer: j.Observer(), Clock: o.Clock,
		Budget: o.StepBudget, ItemBudget: o.ItemBudget, ItemSpent: AgentSpend(j.total()),
		MaxOutput: o.MaxOutput, Window: o.Window,
	}
}

// SpendText is a spend in the words of the Job's log lines.
func SpendText(s record.Spend) string {
	return fmt.Sprintf("%d tokens in, %d out, %s, %d model calls", s.TokensIn, s.TokensOut, text.USD(s.USD), s.ModelCalls)
}
