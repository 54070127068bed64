// KV Planner: keep each slider in step with its number box, and the copy buttons.
// No arithmetic here beyond the log slider's lookup: the server sends the list of stops.
(function () {
  "use strict";

  function stops(slider) {
    return slider.dataset.values ? slider.dataset.values.split(",") : null;
  }

  function onSlider(event) {
    var slider = event.target;
    var box = document.getElementById(slider.dataset.target);
    var values = stops(slider);
    box.value = values ? values[Number(slider.value)] : slider.value;
  }

  function onBox(event) {
    var box = event.target;
    var slider = document.querySelector('input[type="range"][data-target="' + box.id + '"]');
    if (!slider || !/^[0-9.]+$/.test(box.value)) {
      return;  // "32k" etc.: the server's answer moves the slider after the swap
    }
    var values = stops(slider);
    if (!values) {
      slider.value = box.value;
      return;
    }
    var index = values.indexOf(box.value);
    if (index >= 0) {
      slider.value = String(index);
    }
  }

  function syncFromServer() {
    var inner = document.querySelector("#results .results-inner");
    var mml = document.getElementById("f-mml-slider");
    var util = document.getElementById("f-util-slider");
    if (!inner) {
      return;
    }
    if (mml && document.activeElement !== mml) {
      mml.value = inner.dataset.sliderIndex;
    }
    if (util && document.activeElement !== util) {
      util.value = inner.dataset.util;
    }
  }

  function textOf(source) {
    if (source.tagName === "A") {
      return source.getAttribute("href");
    }
    return "value" in source ? source.value : source.textContent;
  }

  function copyText(button) {
    if (button.dataset.copyFetch) {  // the estimate as JSON / YAML: the API's answer for these inputs
      var api = document.getElementById(button.dataset.copyFetch);
      fetchText(api.getAttribute("href")).then(function (text) { writeClipboard(button, text); }, function () {});
      return;
    }
    var source = document.getElementById(button.dataset.copy);
    var text = textOf(source);
    if (button.dataset.copyAsUrl) {
      text = new URL(text, window.location.href).href;
    }
    if (button.dataset.copyLink) {  // e.g. the Markdown summary ends with the permalink
      var link = document.getElementById(button.dataset.copyLink);
      text += "\n" + new URL(link.getAttribute("href"), window.location.href).href;
    }
    writeClipboard(button, text);
  }

  function fetchText(href) {
    return window.fetch(href, { credentials: "same-origin" }).then(function (response) {
      return response.ok ? response.text() : Promise.reject(new Error(String(response.status)));
    });
  }

  // The command card's tabs: the command, or the same configuration as a deployment (GET /api/deploy).
  var activeTab = "command";

  function selectTab(tab) {
    var list = tab.closest("[role=tablist]");
    if (!list) {
      return;
    }
    list.querySelectorAll("[role=tab]").forEach(function (other) {
      var selected = other === tab;
      other.setAttribute("aria-selected", selected ? "true" : "false");
      var panel = document.getElementById(other.getAttribute("aria-controls"));
      if (panel) {
        panel.hidden = !selected;
      }
    });
    activeTab = tab.id.replace(/^tab-/, "");
    var panel = document.getElementById(tab.getAttribute("aria-controls"));
    var pre = panel ? panel.querySelector("pre.deploy-text") : null;
    if (pre && tab.getAttribute("href") && pre.dataset.loaded !== tab.getAttribute("href")) {
      var href = tab.getAttribute("href");
      fetchText(href).then(function (text) {
        pre.textContent = text;
        pre.dataset.loaded = href;
      }, function () {});
    }
  }

  function writeClipboard(button, text) {
    var done = function () {
      button.dataset.copied = "true";
      window.setTimeout(function () { delete button.dataset.copied; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {});
    } else {
      var scratch = document.createElement("textarea");
      scratch.value = text;
      scratch.className = "visually-hidden";
      document.body.appendChild(scratch);
      scratch.select();
      document.execCommand("copy");
      scratch.remove();
      done();
    }
  }

  // A fragment carries the inputs once (#planner-state); its links to other views of the same inputs
  // come with their path only (data-state-link) and are completed here.
  function completeStateLinks() {
    var state = document.getElementById("planner-state");
    if (!state) {
      return;
    }
    document.querySelectorAll("a[data-state-link]").forEach(function (a) {
      var query = new URLSearchParams(state.value);
      if (a.dataset.stateDrop) {
        query.delete(a.dataset.stateDrop);
      }
      var extra = new URLSearchParams(a.dataset.stateExtra || "");
      extra.forEach(function (value, key) { query.set(key, value); });
      a.setAttribute("href", a.dataset.stateLink + "?" + query.toString());
    });
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches('input[type="range"][data-target]')) {
      onSlider(event);
    } else if (event.target.matches("#f-mml, #f-util")) {
      onBox(event);
    }
  }, true);  // capture: the box is updated before htmx's form listener sees the event
  // A checkbox holding a value from the URL it could not read (forms.html's checkbox macro) becomes an
  // ordinary box once the user changes it: checked again, it posts "true", not the unreadable value.
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (box.matches('input[type="checkbox"][data-unknown]')) {
      box.value = "true";
      box.removeAttribute("data-unknown");
      var note = box.parentElement && box.parentElement.querySelector(".unknown-value");
      if (note) {
        note.remove();
      }
    }
  }, true);
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.copy");
    if (button) {
      copyText(button);
    }
    var tab = event.target.closest(".deploy-tab");
    if (tab) {
      event.preventDefault();  // without JavaScript a tab is a link to the text itself
      selectTab(tab);
    }
  });
  // The address bar follows the server's HX-Replace-Url, once per swap and after the new results are
  // painted. htmx's own history is off (base.html's htmx-config, "historyEnabled": false): it replaced the
  // address twice inside the swap (first with the address it already had), each replace a same-document
  // navigation of 2-20 ms on the loaded bench machine (bench/slider_latency.py). The state stays
  // {htmx: true}, so going back to this entry re-requests its address as before.
  document.addEventListener("htmx:replacedInHistory", function (event) {
    var path = event.detail.path;
    var replace = function () { history.replaceState({ htmx: true }, "", path); };
    if (document.hidden) {  // a hidden tab paints no frame: replace now
      replace();
    } else {
      window.requestAnimationFrame(function () { window.setTimeout(replace, 0); });
    }
  });
  // The verdict box's "Change, in this order" comes with the recommendation, out of band; an answer
  // for inputs the page no longer shows (a slow one overtaken by a slider move) is not swapped in.
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target;
    var incoming = event.detail.fragment && event.detail.fragment.firstElementChild;
    if (target && target.id === "verdict-changes" && incoming &&
        incoming.getAttribute("data-for") !== target.getAttribute("data-for")) {
      event.detail.shouldSwap = false;
    }
  });
  // A slider move replaces the results, whose Speed section and recommendation come back in requests
  // of their own (the slots: hx-trigger "load" and "load delay:400ms"). Until a slot's answer arrives
  // it holds the section it replaces, inert and (if the answer is slow) dimmed, instead of its one-line
  // placeholder: the page below keeps its place, so the answer's swap lays out and paints that section,
  // not everything under it twice (bench/slider_latency.py). A slot whose request fails shows its
  // placeholder again. The section is the one its slot swapped in (same id) or one the slot still holds.
  var SLOTS = { "speed-slot": "speed", "recommend-slot": "recommend" };
  var held = {};

  function holdSections(results) {
    held = {};
    Object.keys(SLOTS).forEach(function (slot) {
      var section = document.getElementById(SLOTS[slot]);
      if (section && results.contains(section)) {
        held[slot] = section;
      }
    });
  }

  function placeHeld() {
    Object.keys(held).forEach(function (id) {
      var slot = document.getElementById(id);
      if (slot && !slot.contains(held[id])) {
        held[id].inert = true;
        slot.appendChild(held[id]);
        // an attribute, not a class: htmx settles "class" (attributesToSettle in base.html), so a second
        // swap while the slot still waits would put the new slot's class back and unmark the held section
        slot.setAttribute("data-held", "");
        slot.setAttribute("aria-busy", "true");
      }
    });
    held = {};
  }

  function releaseSlot(slot) {  // no answer to swap in: the placeholder again
    if (slot && slot.hasAttribute("data-held")) {
      var section = document.getElementById(SLOTS[slot.id]);
      if (section && slot.contains(section)) {
        section.remove();
      }
      slot.removeAttribute("data-held");
      slot.removeAttribute("aria-busy");
    }
  }
  ["htmx:responseError", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function (event) {
      var elt = event.detail.elt;
      if (elt && SLOTS[elt.id]) {
        releaseSlot(elt);
      }
    });
  });

  // Sections the user had opened open again once their new content is in (a lazy one then fetches its
  // body for the new inputs: opening fires its "toggle" trigger); a section a slot holds is still open
  // and waits for the slot's answer.
  var reopen = [];
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "results" && event.detail.shouldSwap) {
      reopen = Array.prototype.map.call(
        event.detail.target.querySelectorAll("details[id][open]"), function (d) { return d.id; });
      holdSections(event.detail.target);
    }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "results") {
      placeHeld();
      // the doctor on a phone puts its answer above the form (doctor.css): go to it from the button
      if (event.detail.target.closest(".layout.doctor") && window.matchMedia("(max-width: 700px)").matches &&
          event.detail.target.querySelector("#doctor-verdict, #doctor-errors")) {
        event.detail.target.scrollIntoView({ block: "start" });
      }
    }
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    syncFromServer();
    completeStateLinks();
    if (activeTab !== "command") {  // the new results show the tab that was open, for the new inputs
      var again = document.getElementById("tab-" + activeTab);
      if (again) {
        selectTab(again);
      }
    }
    reopen = reopen.filter(function (id) {
      var details = document.getElementById(id);
      if (!details || details.closest("[data-held]")) {
        return true;  // not here yet (a slot's section): its slot's answer settles later
      }
      details.open = true;
      return false;
    });
  });
})();
