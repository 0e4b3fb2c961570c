import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("agents", [
  "spawn",
  "send",
  "followUp",
  "listAgents",
  "wait",
  "interrupt",
  "listModels",
]);
