/* The book site's own script (added by bookbuild.site to every page).
 *
 * Sidebar buttons. The page has two buttons of class `primary-toggle` (one in
 * pydata-sphinx-theme's top bar, one in sphinx-book-theme's article header) and
 * two of class `secondary-toggle`; both themes attach their handlers to the
 * first one only, which is hidden, so the visible buttons did nothing. Each
 * visible button here passes its click on to the first one, where the themes'
 * handlers collapse the sidebar (wide screens) or open it as a dialog (narrow).
 *
 * Solution headers. sphinx-exercise puts a link to the exercise inside the
 * title of a folded solution; a click on it left the page instead of opening
 * the solution. The link now opens the solution, like the rest of the title.
 */
(function () {
  "use strict";

  function forwardToggles(selector) {
    const buttons = Array.from(document.querySelectorAll(selector));
    const handled = buttons[0];
    buttons.slice(1).forEach((button) => {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        handled.click();
      });
    });
  }

  function solutionTitlesOpenTheSolution() {
    document.querySelectorAll(".admonition.dropdown > .admonition-title a").forEach((link) => {
      link.addEventListener("click", (event) => {
        // Stay on the page and press the title's fold button (sphinx-togglebutton adds it once the page loads).
        event.preventDefault();
        event.stopPropagation();
        const button = link.closest(".admonition-title").querySelector(".toggle-button");
        if (button) {
          button.click();
        }
      });
    });
  }

  function ready() {
    forwardToggles(".primary-toggle");
    forwardToggles(".secondary-toggle");
    solutionTitlesOpenTheSolution();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
