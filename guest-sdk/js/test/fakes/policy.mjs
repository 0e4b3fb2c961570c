import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("policy", ["evaluate"], {
  evaluate: { decision: "allow", approvalToken: null },
});
