import { fakeInterface } from "./recorder.mjs";

export default fakeInterface("presentation", ["update"]);
