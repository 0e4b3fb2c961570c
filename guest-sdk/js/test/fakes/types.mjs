// wasi:filesystem/types: the SDK reaches descriptors only through preopens.
export { Descriptor } from "./preopens.mjs";
export default {};
