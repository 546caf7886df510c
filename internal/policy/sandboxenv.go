package policy

import "context"

// RunEnv is Run with extra variables added to the tool environment (later
// ones win), for settings roadmap itself chooses, such as the parallelism
// the checks run with after an oom. Never pass a credential here.
func (s *Sandbox) RunEnv(ctx context.Context, argv, extra []string) (Result, error) {
	if err := s.check(); err != nil {
		return Result{}, err
	}
	env := append(append([]string(nil), s.env...), extra...)
	res, err := s.policy.Run(ctx, s.b, s.ws, argv, env)
	res.Output = mask(res.Output, s.secrets)
	return res, err
}
