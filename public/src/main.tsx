/** Entry: mounts the builder into the shell's #app element. */
import { render } from "preact";
import { App } from "./app";
import "./styles.css";

const root = document.getElementById("app");
// The shell (index.html) always has #app; without it there is nowhere to mount.
if (!root) throw new Error("the page has no #app element to mount the builder into");
root.textContent = "";
render(<App />, root);
